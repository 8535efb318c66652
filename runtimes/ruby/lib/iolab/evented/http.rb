# frozen_string_literal: true

require 'em-http'
require_relative '../backends'

module Iolab
  module Evented
    # `http:MS`: GET {base}/delay?ms=MS through em-http-request, on the reactor.
    # Idle keep-alive connections wait on a stack for the next call; there is
    # no cap, as in the Rust targets.
    class Http
      def initialize(base)
        @base = base
        @path = URI.parse(base).path
        @idle = []
      end

      # done.(error)
      def call(micros, &done)
        Counters.backend_call(:http)
        conn = @idle.pop || EM::HttpRequest.new(@base, connect_timeout: Backends::CONNECT_TIMEOUT_S,
                                                       inactivity_timeout: 0)
        req = conn.get(path: "#{@path}/delay", query: { 'ms' => Steps.millis_text(micros) }, keepalive: true)
        timer = EM::Timer.new(micros / 1e6 + Backends::IO_TIMEOUT_S) { conn.close('timed out') }
        req.callback do
          timer.cancel
          status = req.response_header.status
          @idle.push(conn) # reusable even if the server closed it: em-http reconnects
          done.call(status == 200 ? nil : Backends.failed(:http, "delay service answered #{status}"))
        end
        req.errback do
          timer.cancel
          done.call(Backends.unavailable(:http, req.error || 'connection failed'))
        end
      end
    end
  end
end
