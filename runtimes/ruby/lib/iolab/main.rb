# frozen_string_literal: true

require_relative 'settings'

# The launcher (runtimes/README.md): validate the flags, build the app for the
# model, serve; stdout line 1 is the URL once the server accepts requests
# (after any warm-up), line 2 the metrics URL with --metrics-port. Logs go to
# stderr. SIGTERM/SIGINT stop it and everything it started, exit 0.
module Iolab
  module Main
    # Longest a stop may take: a sequential server may be mid-request (a
    # blocked reactor cannot stop itself), so the process then just ends.
    STOP_GRACE_S = 3

    module_function

    def run(argv)
      if argv.include?('--help') || argv.include?('-h')
        $stdout.puts Settings.usage
        return 0
      end
      settings = begin
        Settings.parse(argv)
      rescue UsageError => e
        warn "error: #{e.message}"
        return 2
      end
      $stdout.sync = true
      $PROGRAM_NAME = "iolab-ruby #{settings.model}" # what ps shows (unicorn names its workers after it)
      serve(settings)
      0
    end

    def serve(settings)
      require_relative 'app'
      require_relative 'handler'
      require_relative 'metrics_server'
      require_relative 'warmup'
      metrics = settings.metrics_port && MetricsServer.new(MetricsServer.bind(settings.metrics_port))
      App.set :work, handler(settings)
      if settings.model == 'prefork'
        require_relative 'servers/prefork'
        server = Servers::Prefork.new(settings, App.new)
        metrics_pid = metrics&.start_process(server.listener)
        begin
          server.run { |port| announce(settings, port, metrics) }
        ensure
          stop_child(metrics_pid)
        end
      else
        require_relative 'servers/thin'
        require_relative 'held'
        App.set :held, Held.new(settings, App.settings.work.runner)
        metrics&.start_thread
        trap_stop
        Servers::ThinServer.new(settings, App.new).run { |port| announce(settings, port, metrics) }
      end
    end

    def handler(settings)
      case settings.model
      when 'loop-async'
        require_relative 'evented/runner'
        Handler::Evented.new(settings, Evented::Runner.new(settings))
      else
        require_relative 'blocking/runner'
        Handler::Blocking.new(settings, Blocking::Runner.new(settings, threads: settings.model == 'pool'))
      end
    end

    # Warm up (in a thread: the server must be running to answer), then print the URLs.
    def announce(settings, port, metrics)
      Thread.new do
        Warmup.run(port, settings.warmup) if settings.warmup.positive?
        $stdout.puts "http://127.0.0.1:#{port}"
        $stdout.puts "metrics http://127.0.0.1:#{metrics.port}" if metrics
        $stdout.flush
      rescue StandardError => e
        # Without its URL line the target is useless: stop it (and its children) rather than hang.
        warn "error: cannot announce the target: #{e.class}: #{e.message}"
        Process.kill('TERM', Process.pid)
      end
    end

    # Thin models: stop the reactor; if it is blocked in a request, end the
    # process after STOP_GRACE_S anyway (the exit status stays 0).
    def trap_stop
      wake_r, wake_w = IO.pipe
      Thread.new do
        wake_r.read(1)
        sleep STOP_GRACE_S
        exit!(0)
      end
      %w[TERM INT].each do |sig|
        trap(sig) do
          wake_w.write_nonblock('x') rescue nil
          EM.stop if EM.reactor_running?
        end
      end
    end

    def stop_child(pid)
      return unless pid

      Process.kill('TERM', pid)
      Process.wait(pid)
    rescue SystemCallError
      nil
    end
  end
end
