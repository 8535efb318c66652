# frozen_string_literal: true

require 'eventmachine'
require 'pg'
require_relative '../backends'

module Iolab
  module Evented
    # Hands a watched socket's readiness to its PgConn.
    module PgWatch
      def initialize(owner)
        super()
        @owner = owner
      end

      def notify_readable = @owner.ready
      def notify_writable = @owner.ready
    end

    # One PostgreSQL connection driven by libpq's asynchronous API with its
    # socket watched by the reactor (EM.watch): connecting (connect_start +
    # connect_poll) and querying (send_query_params, then consume_input until
    # not busy) never wait on the reactor thread.
    class PgConn
      attr_reader :broken

      # Open one; done.(error message or nil, conn).
      def initialize(conninfo, &done)
        @done = done
        @state = :connecting
        @conn = PG::Connection.connect_start(conninfo)
        @timer = EM::Timer.new(Backends::CONNECT_TIMEOUT_S) do
          fail_connect("cannot connect within #{Backends::CONNECT_TIMEOUT_S} s")
        end
        watch(read: false, write: true) # libpq: after connect_start, wait until writable
      rescue PG::Error => e
        @broken = true
        EM.next_tick { done.call(e.message.strip, nil) }
      end

      # Send one query; done.(PG::Error or nil) once its results are in.
      def query(sql, params, &done)
        @done = done
        @conn.send_query_params(sql, params)
        watch(read: true, write: false)
      rescue PG::Error => e
        lost
        EM.next_tick { done.call(e) }
      end

      # The socket is ready for what we wait for.
      def ready
        @state == :connecting ? poll : results
      end

      def close
        @watch&.detach
        @watch = nil
        @conn.finish unless @conn.finished?
      rescue StandardError
        nil
      end

      private

      def poll
        case @conn.connect_poll
        when PG::PGRES_POLLING_OK
          @timer.cancel
          @state = :idle
          watch(read: false, write: false)
          take_done.call(nil, self)
        when PG::PGRES_POLLING_READING then watch(read: true, write: false)
        when PG::PGRES_POLLING_WRITING then watch(read: false, write: true)
        else fail_connect(@conn.error_message.strip)
        end
      end

      def fail_connect(message)
        return unless @state == :connecting

        @timer.cancel
        @state = :failed
        lost
        take_done&.call(message.empty? ? 'connection failed' : message, nil)
      end

      # Read what arrived; once the query's results are all in, hand them over.
      def results
        @conn.consume_input
        return if @conn.is_busy

        watch(read: false, write: false)
        error = nil
        while (r = @conn.get_result)
          begin
            r.check
          rescue PG::Error => e
            error ||= e
          end
          r.clear
        end
        take_done&.call(error)
      rescue PG::Error => e
        lost
        take_done&.call(e)
      end

      def lost
        @broken = true
        close
      end

      def take_done
        done = @done
        @done = nil
        done
      end

      # Watch the connection's current socket (libpq may change it while connecting).
      def watch(read:, write:)
        io = @conn.socket_io
        if @watch.nil? || !@io.equal?(io)
          @watch&.detach
          @io = io
          @watch = EM.watch(io, PgWatch, self)
        end
        @watch.notify_readable = read
        @watch.notify_writable = write
      end
    end
  end
end
