# frozen_string_literal: true

require 'raindrops'
require_relative 'steps'

# The contract's /metrics counters. They live in a Raindrops block: shared,
# atomically updated memory that forked processes keep sharing (unicorn's own
# tool for counting across workers), so prefork children add into one set of
# counters that any child, or a separate metrics process, reads whole.
module Iolab
  module Counters
    IN_FLIGHT = 0
    COMPLETED = 1
    REJECTED = 2
    CALLS = 3 # one slot per backend, in BACKENDS order

    @drops = Raindrops.new(CALLS + BACKENDS.size)
    # Requests waiting for a thread or a process: set by the server that can see its queue.
    @queued = -> { 0 }
    # The process whose tree iolab_threads counts (the launcher).
    @root = Process.pid

    class << self
      attr_writer :queued

      def backend_call(kind) = @drops.incr(CALLS + BACKENDS.index(kind))
      def calls(kind) = @drops[CALLS + BACKENDS.index(kind)]
      def in_flight = @drops[IN_FLIGHT]
      def completed = @drops[COMPLETED]
      def reject = @drops.incr(REJECTED)

      # One /work request began executing.
      def start = @drops.incr(IN_FLIGHT)

      # One /work request is answered: counted before the answer is written, so
      # a client that reads /metrics after its answer always sees it.
      def finish
        @drops.incr(COMPLETED)
        @drops.decr(IN_FLIGHT)
      end

      # Zero the totals (after a warm-up, with nothing in flight).
      def reset
        ([COMPLETED, REJECTED] + (CALLS...(CALLS + BACKENDS.size)).to_a).each { |i| @drops[i] = 0 }
      end

      def queued
        @queued.call.to_i
      rescue StandardError
        0
      end

      # Live OS threads of the launcher and every process below it.
      def threads
        pids = [@root] + descendants(@root)
        pids.sum { |pid| Dir.children("/proc/#{pid}/task").size rescue 0 }
      end

      def prometheus
        out = +''
        metric = lambda do |name, type, help, value|
          out << "# HELP #{name} #{help}\n# TYPE #{name} #{type}\n#{name} #{value}\n"
        end
        metric.call('iolab_requests_in_flight', 'gauge', '/work requests executing now.', in_flight)
        metric.call('iolab_requests_queued', 'gauge',
                    'Requests waiting for a thread (pool) or in the listen queue (sequential, prefork).', queued)
        metric.call('iolab_requests_completed_total', 'counter',
                    '/work requests answered, whatever the status, except overload rejections.', completed)
        metric.call('iolab_requests_rejected_total', 'counter',
                    'Requests refused with 503 because no thread could be had.', @drops[REJECTED])
        metric.call('iolab_threads', 'gauge', 'Live OS threads of the target (all its processes).', threads)
        out << "# HELP iolab_backend_calls_total Backend calls made, by kind.\n"
        out << "# TYPE iolab_backend_calls_total counter\n"
        BACKENDS.each { |k| out << "iolab_backend_calls_total{kind=\"#{k}\"} #{calls(k)}\n" }
        out
      end

      private

      # Pids below `root`, from each process's parent in /proc/PID/stat.
      def descendants(root)
        parent = {}
        Dir.children('/proc').each do |d|
          next unless d.match?(/\A\d+\z/)

          stat = File.read("/proc/#{d}/stat") rescue next
          parent[d.to_i] = stat[(stat.rindex(')') + 2)..].split(' ', 3)[1].to_i
        end
        found = []
        frontier = [root]
        until frontier.empty?
          kids = parent.select { |_, pp| frontier.include?(pp) }.keys
          found.concat(kids)
          frontier = kids
        end
        found
      end
    end
  end
end
