# frozen_string_literal: true

require 'dalli'
require_relative 'lease_pool'
require_relative '../backends'

module Iolab
  module Blocking
    # `mc:KEY` through dalli, the blocking client a Ruby app uses today (the
    # article's memcache-client is long gone). One Dalli::Client is one socket
    # behind a mutex, so `mc_pool` clients are leased one get at a time: with
    # the default of 1 every thread waits for the one connection, as in E4.
    class Mc
      def initialize(addr, size)
        @addr = addr
        @pool = LeasePool.new(size)
      end

      # The value stored under key, read on the calling thread.
      def get(key)
        Counters.backend_call(:mc)
        value = nil
        leased = @pool.with(Backends::MC_WAIT_S) do |slot|
          slot.conn ||= client
          value = slot.conn.get(key)
        rescue Dalli::DalliError => e
          slot.conn&.close
          slot.conn = nil
          raise Backends.unavailable(:mc, "#{@addr}: #{e.message}")
        end
        raise Backends.pool_timeout(:mc, Backends::MC_WAIT_S * 1000) unless leased
        raise Backends.mc_miss(key) if value.nil?

        value
      end

      private

      def client
        Dalli::Client.new(@addr,
                          socket_timeout: Backends::IO_TIMEOUT_S,
                          # A server that went away is tried again on the next get, not 30 s later.
                          down_retry_delay: 0, socket_failure_delay: false, socket_max_failures: 1,
                          value_max_bytes: 256 << 20)
      end
    end
  end
end
