# frozen_string_literal: true

require 'socket'
require_relative 'counters'

module Iolab
  # --metrics-port: GET /metrics on a second listener that only reads the
  # counters, so a busy reactor or a full pool cannot starve it. In a Thin
  # model it is a Ruby thread of its own. Under MRI's GVL such a thread runs
  # as soon as the busy thread waits (a sleep, a socket, a pg query all let go
  # of the GVL), and within one 100 ms time slice while Ruby code computes
  # (a cpu step). For prefork it is a process of its own, reading the shared
  # counters, so not even the GVL is shared.
  class MetricsServer
    def self.bind(port) = TCPServer.new('127.0.0.1', port)

    attr_reader :port

    def initialize(listener)
      @listener = listener
      @port = listener.addr[1]
    end

    # Serve in a thread of this process.
    def start_thread = Thread.new { serve }

    # Serve in a child process (which closes its copy of `other`, the target's
    # own listener); its pid. The parent's copy of the metrics socket is closed.
    def start_process(other)
      pid = fork do
        other.close
        %w[TERM INT].each { |sig| trap(sig) { exit!(0) } }
        serve
      end
      @listener.close
      pid
    end

    private

    def serve
      loop do
        client = @listener.accept
        answer(client)
      rescue IOError, SystemCallError => e
        warn "iolab: metrics listener: #{e.message}"
      ensure
        client&.close
      end
    end

    def answer(client)
      head = +''
      head << client.readpartial(4096) until head.include?("\r\n\r\n") || head.bytesize > 16_384
      path = head[/\AGET (\S+)/, 1]
      status, body = case path
                     when '/metrics' then ['200 OK', Counters.prometheus]
                     when '/health' then ['200 OK', '{"ok":true}']
                     else ['404 Not Found', "only GET /metrics here\n"]
                     end
      type = path == '/metrics' ? Answers::PROMETHEUS_TYPE : 'text/plain'
      client.write("HTTP/1.1 #{status}\r\nContent-Type: #{type}\r\nContent-Length: #{body.bytesize}\r\n" \
                   "Connection: close\r\n\r\n#{body}")
    end
  end
end
