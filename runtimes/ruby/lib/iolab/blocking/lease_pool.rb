# frozen_string_literal: true

module Iolab
  module Blocking
    # One pooled connection, opened on first use by whoever leases it.
    Slot = Struct.new(:conn)

    # `size` slots leased one caller at a time, first come first served: a
    # returned slot goes straight to the longest waiter, so no thread barges
    # past the queue (an unfair pool made the JVM target's p99 seconds long).
    class LeasePool
      Waiter = Struct.new(:cv, :slot)

      def initialize(size)
        @free = Array.new(size) { Slot.new }
        @waiters = []
        @lock = Mutex.new
      end

      # Yield a slot, waiting up to wait_s for one; true once it ran, false if
      # no slot came in time.
      def with(wait_s)
        slot = acquire(wait_s) or return false
        begin
          yield slot
          true
        ensure
          release(slot)
        end
      end

      private

      def acquire(wait_s)
        @lock.synchronize do
          return @free.shift if @waiters.empty? && !@free.empty?

          me = Waiter.new(ConditionVariable.new, nil)
          @waiters << me
          deadline = now + wait_s
          until me.slot
            left = deadline - now
            if left <= 0
              @waiters.delete(me)
              return nil
            end
            me.cv.wait(@lock, left)
          end
          me.slot
        end
      end

      def release(slot)
        @lock.synchronize do
          if (next_in_line = @waiters.shift)
            next_in_line.slot = slot
            next_in_line.cv.signal
          else
            @free << slot
          end
        end
      end

      def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end
  end
end
