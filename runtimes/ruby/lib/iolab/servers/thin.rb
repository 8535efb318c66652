# frozen_string_literal: true

require 'logger'
require 'thin'
require_relative '../counters'

module Iolab
  module Servers
    # sequential, pool and loop-async: one Thin server on the EventMachine
    # reactor, in the process's main thread.
    #   sequential  Thin as it comes: the app runs on the reactor thread, one
    #               request at a time; everyone else waits (in the listen queue,
    #               or read but unserved on the reactor).
    #   pool        Thin's threaded mode: each request is handed to
    #               EventMachine's thread pool (EM.defer, `threads` threads).
    #   loop-async  the app answers AsyncResponse and finishes in callbacks.
    class ThinServer
      def initialize(settings, app)
        @settings = settings
        @app = app
      end

      # Serve until the reactor stops; on_listen.(port) once it accepts connections.
      def run(&on_listen)
        Thin::Logging.logger = Logger.new($stderr, level: Logger::WARN)
        # An exception escaping a callback must cost one request, not the server.
        EM.error_handler { |e| warn "iolab: #{e.class}: #{e.message}\n  #{Array(e.backtrace).first(5).join("\n  ")}" }
        EM.epoll
        # Every waiting loop-async request holds a timer (EM's default cap is 100,000).
        EM.set_max_timers(1_000_000)
        # faye-websocket takes the socket from Thin's connection (held.rb).
        Faye::WebSocket.load_adapter('thin') if defined?(Faye::WebSocket)
        EM.run do
          server = Thin::Server.new('127.0.0.1', @settings.port, @app, signals: false)
          # No inactivity timeout: a request may legitimately wait an hour for its steps.
          server.timeout = 0
          # Thin 1.8.1 answers `Connection: keep-alive` on a connection past its
          # persistent limit (default 100) and then closes it: a keep-alive client
          # reusing it gets a reset (iolab saw 1-10% at 170 clients). Let every
          # connection persist, as Thin's --max-persistent-conns allows.
          server.maximum_persistent_connections = server.maximum_connections
          if @settings.model == 'pool'
            server.threaded = true
            server.threadpool_size = @settings.threads
          end
          server.config
          server.start
          port = server.backend.port
          Counters.queued = queue_probe(port)
          on_listen.call(port)
        end
      end

      private

      # Where this model's waiting requests can be seen.
      def queue_probe(port)
        case @settings.model
        when 'pool' then -> { EM.instance_variable_get(:@threadqueue)&.size || 0 }
        when 'sequential' then ListenQueue.new(port)
        else -> { 0 } # loop-async: nothing waits for a thread
        end
      end
    end

    # The kernel's count of connections waiting in a listen queue (inet_diag,
    # through Raindrops, the number `ss -lt` shows as Recv-Q).
    class ListenQueue
      def initialize(port)
        @addr = "127.0.0.1:#{port}"
      end

      def call = Raindrops::Linux.tcp_listener_stats([@addr])[@addr].queued
    end
  end
end
