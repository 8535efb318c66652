# frozen_string_literal: true

require_relative '../cpu'

module Iolab
  module Blocking
    # Runs a workload on the calling thread, blocking it for every IO call
    # (sequential, pool, prefork). How par(...) gets concurrency is the one
    # thing those models do differently: `threads: false` runs the children one
    # after another (one thread, one request: nothing else to give a child);
    # `threads: true` starts a Ruby thread per child but the first, and joins them.
    class Runner
      def initialize(settings, threads:)
        @threads = threads
        # Each client library is loaded only when its backend is configured (start-up time).
        @mc = settings.mc && load_client('mc') { Mc.new(settings.mc, settings.mc_pool) }
        @pg = settings.pg && load_client('pg') { Pg.new(settings.pg, settings.pg_pool, settings.pg_wait_ms) }
        @http = settings.http_backend && load_client('http') { Http.new(settings.http_backend) }
      end

      # Run step; the value of its last mc get in written order, or nil. Raises WorkError.
      def run(step)
        case step.kind
        when :seq then step.arg.reduce(nil) { |last, child| run(child) || last }
        when :par then par(step.arg)
        when :mc then @mc.get(step.arg)
        else
          leaf(step)
          nil
        end
      end

      private

      # A leaf that fetches nothing.
      def leaf(step)
        case step.kind
        when :cpu then Cpu.leibniz(step.arg)
        when :sleep
          Counters.backend_call(:sleep)
          Kernel.sleep(step.arg / 1e6)
        when :http then @http.call(step.arg)
        when :pg then @pg.pg_sleep(step.arg)
        end
      end

      def load_client(file)
        require_relative file
        yield
      end

      # Every child runs; the first error in written order wins, else the last value.
      def par(children)
        results = if @threads
                    first, *rest = children
                    others = rest.map { |child| Thread.new { outcome(child) } }
                    [outcome(first)] + others.map(&:value)
                  else
                    children.map { |child| outcome(child) }
                  end
        error = results.find { |r| r.is_a?(Exception) }
        raise error if error

        results.compact.last
      end

      def outcome(child)
        run(child)
      rescue StandardError => e
        e
      end
    end
  end
end
