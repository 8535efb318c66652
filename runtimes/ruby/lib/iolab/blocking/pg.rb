# frozen_string_literal: true

require 'pg'
require_relative 'lease_pool'
require_relative '../backends'

module Iolab
  module Blocking
    # `pg:MS`: SELECT pg_sleep($1) through ruby-pg on the calling thread, which
    # holds one of `pg_pool` pooled connections throughout (pg waits for the
    # answer with the GVL released, so other threads run meanwhile).
    class Pg
      SQL = 'SELECT pg_sleep($1)'

      def initialize(url, size, wait_ms)
        @url = url
        @wait_ms = wait_ms
        @pool = LeasePool.new(size)
      end

      def pg_sleep(micros)
        Counters.backend_call(:pg)
        leased = @pool.with(@wait_ms / 1000.0) { |slot| query(slot, micros / 1e6) }
        raise Backends.pool_timeout(:pg, @wait_ms) unless leased
      end

      private

      # One query on the slot's connection; a pooled connection that died (a
      # restarted server) is replaced once, as a pool's validation would.
      def query(slot, seconds)
        tries = slot.conn ? 2 : 1
        begin
          slot.conn ||= connect
          slot.conn.exec_params(SQL, [seconds]).clear
        rescue PG::Error => e
          broken = slot.conn.nil? || slot.conn.finished? || slot.conn.status != PG::CONNECTION_OK
          if broken
            slot.conn&.close rescue nil
            slot.conn = nil
            retry if (tries -= 1).positive?
            raise Backends.unavailable(:pg, e.message.strip)
          end
          state = e.result&.error_field(PG::PG_DIAG_SQLSTATE)
          raise Backends.unavailable(:pg, e.message.strip) if Backends.pg_unavailable_state?(state)

          raise Backends.failed(:pg, e.message.strip)
        end
      end

      def connect
        PG.connect(@url, connect_timeout: Backends::CONNECT_TIMEOUT_S, application_name: 'iolab')
      end
    end
  end
end
