# frozen_string_literal: true

require 'logger'
require 'socket'
require 'unicorn'
require_relative 'thin' # ListenQueue
require_relative '../counters'

module Iolab
  module Servers
    # prefork: unicorn, the Ruby prefork server. We bind the listening socket
    # and hand it to unicorn as an inherited listener (UNICORN_FD, as in its
    # own zero-downtime upgrades); its master forks `processes` workers that
    # share the socket; each worker takes one connection at a time, runs the
    # request to the end and closes it. Everyone else waits in the kernel's
    # listen queue (`backlog`). The counters are shared memory (counters.rb),
    # so every worker adds into, and answers /metrics from, the same numbers.
    class Prefork
      # Workers are never killed for taking long: a step may last an hour.
      WORKER_TIMEOUT_S = 30 * 24 * 3600

      attr_reader :listener, :port

      def initialize(settings, app)
        @settings = settings
        @app = app
        @listener = TCPServer.new('127.0.0.1', settings.port)
        @listener.listen(settings.backlog)
        @port = @listener.addr[1]
        Counters.queued = ListenQueue.new(@port)
      end

      # Serve until SIGTERM/SIGINT; on_listen.(port) once the workers are forked.
      def run(&on_listen)
        addr = "127.0.0.1:#{@port}"
        ENV['UNICORN_FD'] = @listener.fileno.to_s
        server = Unicorn::HttpServer.new(@app, listeners: [addr], worker_processes: @settings.processes,
                                               timeout: WORKER_TIMEOUT_S, preload_app: true,
                                               logger: Logger.new($stderr, level: Logger::WARN))
        # unicorn re-applies its socket options (backlog 1024 by default) to inherited sockets.
        server.listener_opts = { addr => { backlog: @settings.backlog } }
        server.start
        on_listen.call(@port)
        server.join # the master: reaps and respawns workers, stops them on TERM/INT
      end
    end
  end
end
