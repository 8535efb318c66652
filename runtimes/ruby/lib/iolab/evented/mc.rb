# frozen_string_literal: true

require 'eventmachine'
require 'em/protocols/memcache'
require_relative '../backends'

module Iolab
  module Evented
    # One memcached connection speaking through EM::P::Memcache, the E4
    # article's evented client, unchanged: gets are pipelined on the
    # connection and answered in order, and its parser re-slices its whole
    # buffer for every chunk that arrives (the flaw REFERENCE.md E4 notes).
    # What it lacks for a server that must not hang is added around it: a
    # failed or lost connection fails the gets waiting on it (the module
    # would raise out of the reactor, or reconnect and drop them), and a
    # get that takes longer than the IO timeout closes the connection.
    class McConnection < EM::Connection
      include EM::P::Memcache

      def initialize(host, port, addr, on_close)
        super(host, port)
        @addr = addr
        @on_close = on_close
        @waiting = [] # completion blocks, in the order of the module's own callbacks
        self.pending_connect_timeout = Backends::CONNECT_TIMEOUT_S
      end

      def pending = @waiting.size

      # Get key; done.(error, value) with the value, or nil for a miss.
      def fetch(key, &done)
        timer = EM::Timer.new(Backends::IO_TIMEOUT_S) { close_connection }
        entry = lambda do |err, value|
          timer.cancel
          done.call(err, value)
        end
        @waiting << entry
        get(key) { |value| @waiting.shift&.call(nil, value) }
      end

      # Fail everything in flight instead of the module's reconnect (or raise).
      def unbind(reason = nil)
        why = reason ? reason.new.message : 'connection closed'
        error = Backends.unavailable(:mc, "#{@addr}: #{why}")
        waiting = @waiting
        @waiting = []
        @on_close.call(self)
        waiting.each { |entry| entry.call(error, nil) }
      end
    end

    # `mc_pool` McConnections, opened on first need; each get goes to the one
    # with the fewest gets in flight (with 1, the article's single connection).
    class Mc
      def initialize(addr, size)
        @addr = addr
        @host, _, port = addr.rpartition(':')
        @port = Integer(port)
        @conns = Array.new(size)
      end

      # done.(error, value)
      def get(key, &done)
        Counters.backend_call(:mc)
        i = (0...@conns.size).min_by { |n| @conns[n]&.pending || 0 }
        begin
          @conns[i] ||= EM.connect(@host, @port, McConnection, @host, @port, @addr, method(:closed))
        rescue EM::ConnectionError => e # e.g. a name that does not resolve
          return done.call(Backends.unavailable(:mc, "#{@addr}: #{e.message}"), nil)
        end
        @conns[i].fetch(key) do |err, value|
          next done.call(err, nil) if err
          next done.call(Backends.mc_miss(key), nil) if value.nil?

          done.call(nil, value)
        end
      end

      private

      def closed(conn)
        i = @conns.index(conn)
        @conns[i] = nil if i
      end
    end
  end
end
