# frozen_string_literal: true

require 'logger'
require 'unicorn'
require_relative 'thin' # ListenQueue
require_relative '../counters'

module Iolab
  module Servers
    # prefork: unicorn, the Ruby prefork server. The master binds the listening
    # socket and forks `processes` workers that share it; each worker takes
    # one connection at a time, runs the request to the end and closes it.
    # Everyone else waits in the kernel's listen queue (`backlog`). The
    # counters are shared memory (counters.rb), so every worker adds into, and
    # answers /metrics from, the same numbers.
    class Prefork
      # Workers are never killed for taking long: a step may last an hour.
      WORKER_TIMEOUT_S = 30 * 24 * 3600

      def initialize(settings, app)
        @settings = settings
        @app = app
      end

      # Serve until SIGTERM/SIGINT; on_listen.(port) once the workers are forked.
      def run(&on_listen)
        addr = "127.0.0.1:#{@settings.port}"
        server = Unicorn::HttpServer.new(@app, listeners: [addr], worker_processes: @settings.processes,
                                               timeout: WORKER_TIMEOUT_S, preload_app: true,
                                               logger: Logger.new($stderr, level: Logger::WARN))
        server.listener_opts = { addr => { backlog: @settings.backlog } }
        server.start
        port = Unicorn::HttpServer::LISTENERS.first.addr[1]
        Counters.queued = ListenQueue.new(port)
        on_listen.call(port)
        server.join # the master: reaps and respawns workers, stops them on TERM/INT
      end
    end
  end
end
