# frozen_string_literal: true

require_relative '../cpu'

module Iolab
  module Evented
    # Runs a workload on the EventMachine reactor without blocking it
    # (loop-async): every IO leaf starts its call and returns; its callback
    # continues the workload. seq(...) chains callbacks, par(...) starts every
    # child at once and answers when the last one calls back. cpu runs on the
    # reactor, as on any event loop.
    class Runner
      def initialize(settings)
        # Each client library is loaded only when its backend is configured (start-up time).
        @mc = settings.mc && load_client('mc') { Mc.new(settings.mc, settings.mc_pool) }
        @pg = settings.pg && load_client('pg') { Pg.new(settings.pg, settings.pg_pool, settings.pg_wait_ms) }
        @http = settings.http_backend && load_client('http') { Http.new(settings.http_backend) }
      end

      # Run step; done.(error, value): a WorkError, or the last mc value in written order.
      def run(step, &done)
        case step.kind
        when :cpu
          Cpu.leibniz(step.arg)
          done.call(nil, nil)
        when :sleep
          Counters.backend_call(:sleep)
          EM.add_timer(step.arg / 1e6) { done.call(nil, nil) }
        when :http then @http.call(step.arg) { |e| done.call(e, nil) }
        when :pg then @pg.pg_sleep(step.arg) { |e| done.call(e, nil) }
        when :mc then @mc.get(step.arg, &done)
        when :seq then seq(step.arg, 0, nil, done)
        when :par then par(step.arg, done)
        end
      end

      private

      def load_client(file)
        require_relative file
        yield
      end

      # Children i.. one after another; the first error stops the rest.
      def seq(children, i, last, done)
        return done.call(nil, last) if i == children.size

        run(children[i]) do |e, value|
          e ? done.call(e, nil) : seq(children, i + 1, value || last, done)
        end
      end

      # Every child at once; the first error in written order wins, else the last value.
      def par(children, done)
        results = Array.new(children.size)
        left = children.size
        children.each_with_index do |child, i|
          run(child) do |e, value|
            results[i] = [e, value]
            left -= 1
            next unless left.zero?

            error = results.map(&:first).compact.first
            done.call(error, error ? nil : results.map(&:last).compact.last)
          end
        end
      end
    end
  end
end
