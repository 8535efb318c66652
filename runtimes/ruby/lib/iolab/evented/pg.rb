# frozen_string_literal: true

require_relative 'pg_conn'

module Iolab
  module Evented
    # `pg:MS` on the reactor: a pool of `pg_pool` PgConns, opened on demand;
    # a request that finds none free waits in line (FIFO, no thread held)
    # up to `--pg-wait`, like the blocking pool.
    class Pg
      SQL = 'SELECT pg_sleep($1)'
      Waiter = Struct.new(:got, :timer)

      def initialize(url, size, wait_ms)
        @conninfo = PG::Connection.parse_connect_args(url, connect_timeout: Backends::CONNECT_TIMEOUT_S,
                                                           application_name: 'iolab')
        @size = size
        @wait_ms = wait_ms
        @idle = []
        @open = 0
        @waiters = []
      end

      # done.(error)
      def pg_sleep(micros, &done)
        Counters.backend_call(:pg)
        lease do |error, conn, reused|
          next done.call(error) if error

          attempt(conn, micros / 1e6, reused, done)
        end
      end

      private

      # One query; a reused connection found dead (a restarted server) is
      # replaced once, as a pool's validation would.
      def attempt(conn, seconds, reused, done)
        conn.query(SQL, [seconds]) do |e|
          release(conn)
          if e.nil?
            done.call(nil)
          elsif conn.broken && reused
            lease { |err, fresh| err ? done.call(err) : attempt(fresh, seconds, false, done) }
          else
            done.call(classify(e, conn.broken))
          end
        end
      end

      def classify(e, broken)
        state = e.respond_to?(:result) ? e.result&.error_field(PG::PG_DIAG_SQLSTATE) : nil
        return Backends.unavailable(:pg, e.message.strip) if broken || Backends.pg_unavailable_state?(state)

        Backends.failed(:pg, e.message.strip)
      end

      # got.(error, conn, reused)
      def lease(&got)
        if (conn = @idle.pop)
          got.call(nil, conn, true)
        elsif @open < @size
          open_for(got)
        else
          waiter = Waiter.new(got)
          waiter.timer = EM::Timer.new(@wait_ms / 1000.0) do
            @waiters.delete(waiter)
            got.call(Backends.pool_timeout(:pg, @wait_ms))
          end
          @waiters << waiter
        end
      end

      def open_for(got)
        @open += 1
        PgConn.new(@conninfo) do |message, conn|
          if message
            @open -= 1
            got.call(Backends.unavailable(:pg, message))
            wake # someone waiting may try to open the slot again
          else
            got.call(nil, conn, false)
          end
        end
      end

      def release(conn)
        if conn.broken
          @open -= 1
          wake
        elsif (waiter = @waiters.shift)
          waiter.timer.cancel
          waiter.got.call(nil, conn, true)
        else
          @idle.push(conn)
        end
      end

      def wake
        return if @waiters.empty? || @open >= @size

        waiter = @waiters.shift
        waiter.timer.cancel
        open_for(waiter.got)
      end
    end
  end
end
