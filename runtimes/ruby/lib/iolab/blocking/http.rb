# frozen_string_literal: true

require 'net/http'
require_relative '../backends'

module Iolab
  module Blocking
    # `http:MS`: GET {base}/delay?ms=MS through Net::HTTP on the calling thread.
    # Idle keep-alive connections wait on a stack for the next caller; there is
    # no cap, as in the Rust targets: the delay service is not what is studied.
    class Http
      def initialize(base)
        @uri = URI.parse(base)
        @idle = []
        @lock = Mutex.new
      end

      def call(micros)
        Counters.backend_call(:http)
        conn = @lock.synchronize { @idle.pop } || open
        conn.read_timeout = micros / 1e6 + Backends::IO_TIMEOUT_S
        code = conn.request(Net::HTTP::Get.new(Backends.delay_path(@uri.path, micros))).code
        @lock.synchronize { @idle.push(conn) }
        raise Backends.failed(:http, "delay service answered #{code}") unless code == '200'
      rescue WorkError
        raise
      rescue StandardError => e
        conn&.finish rescue nil
        raise Backends.unavailable(:http, e.message)
      end

      private

      def open
        conn = Net::HTTP.new(@uri.host, @uri.port)
        conn.open_timeout = Backends::CONNECT_TIMEOUT_S
        conn.keep_alive_timeout = 30
        conn.start
      end
    end
  end
end
