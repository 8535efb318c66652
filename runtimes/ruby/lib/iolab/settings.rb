# frozen_string_literal: true

require 'etc'
require 'uri'

# The launcher's flags (runtimes/README.md), validated into one value before
# anything starts. A fault is a UsageError: one line on stderr, exit code 2.
module Iolab
  class UsageError < StandardError; end

  Settings = Struct.new(:model, :port, :threads, :processes, :backlog, :mc_pool, :pg_pool, :pg_wait_ms,
                        :http_backend, :pg, :mc, :warmup, :metrics_port, keyword_init: true)

  class Settings
    MODELS = %w[sequential pool loop-async prefork].freeze

    # Which models each knob applies to; a knob given to another model is refused.
    KNOBS = {
      'threads' => %w[pool],
      'processes' => %w[prefork],
      'backlog' => %w[prefork],
      'mc-pool' => %w[pool loop-async],
      'pg-pool' => %w[pool loop-async],
      # iolab's other knobs: no model of this runtime has them.
      'max-connections' => [], 'workers' => [], 'offload' => [], 'max-threads' => []
    }.freeze

    VALUED = (%w[model port http-backend pg mc pg-wait warmup metrics-port] + KNOBS.keys).freeze
    MAX_WARMUP = 100_000

    # Thin's threaded mode runs requests on EventMachine's thread pool (20 threads).
    DEFAULT_THREADS = 20

    def self.usage
      <<~TEXT
        usage: runtimes/ruby/start --model MODEL [--port P] [OPTIONS]

          --model M           #{MODELS.join(', ')}
          --port P            port on 127.0.0.1 (default 0: a free one; the URL line shows it)
          --threads N         pool: Thin's threaded mode, EventMachine thread pool size (default #{DEFAULT_THREADS})
          --processes N       prefork: unicorn worker processes (default: cores)
          --backlog N         prefork: unicorn listen backlog (default 1024)
          --mc-pool N         pool, loop-async: memcached connections (default 1, the E4 set-up)
          --pg-pool N         pool, loop-async: PostgreSQL connections (default 10)
          --pg-wait MS        longest wait for a pooled PostgreSQL connection (default 30000; 30s also works)
          --http-backend URL  iolab's delay service for http:MS steps (or IOLAB_HTTP_BACKEND)
          --pg URL            PostgreSQL for pg:MS steps, postgres://USER@HOST:PORT/DB (or IOLAB_PG)
          --mc HOST:PORT      memcached for mc:KEY steps (or IOLAB_MC)
          --warmup N          send itself N requests before printing the URL, then zero the counters
          --metrics-port P    also serve /metrics on P from a thread (a process for prefork)
      TEXT
    end

    # Settings from argv (and IOLAB_* for backends not given); raises UsageError.
    def self.parse(argv, env = ENV)
      given = read_flags(argv)
      model = given['model'] or raise UsageError, "missing --model (expected one of: #{MODELS.join(', ')})"
      raise UsageError, "unknown model '#{model}' (expected one of: #{MODELS.join(', ')})" unless MODELS.include?(model)

      KNOBS.each do |knob, models|
        next if !given.key?(knob) || models.include?(model)

        raise UsageError, "--#{knob} does not apply to any model of the ruby runtime" if models.empty?

        raise UsageError, "--#{knob} does not apply to model '#{model}' (it applies to: #{models.join(', ')})"
      end
      count = lambda do |name, min, default = nil, max: nil|
        text = given[name] or return default
        n = Integer(text, 10, exception: false)
        raise UsageError, "--#{name} must be a whole number >= #{min}, got '#{text}'" if n.nil? || n < min
        raise UsageError, "--#{name} must be at most #{max}, got #{n}" if max && n > max

        n
      end
      new(
        model: model,
        port: count.call('port', 0, 0, max: 65_535),
        threads: count.call('threads', 1, DEFAULT_THREADS),
        processes: count.call('processes', 1, Etc.nprocessors),
        backlog: count.call('backlog', 1, 1024),
        mc_pool: count.call('mc-pool', 1, 1),
        pg_pool: count.call('pg-pool', 1, 10),
        pg_wait_ms: wait_ms(given['pg-wait']),
        warmup: count.call('warmup', 0, 0, max: MAX_WARMUP),
        metrics_port: count.call('metrics-port', 0, nil, max: 65_535),
        http_backend: check_http(given['http-backend'] || env['IOLAB_HTTP_BACKEND']),
        pg: check_pg(given['pg'] || env['IOLAB_PG']),
        mc: check_mc(given['mc'] || env['IOLAB_MC'])
      )
    end

    # --pg-wait: milliseconds as the launcher protocol says (500), or an iolab duration (500ms, 30s).
    def self.wait_ms(text)
      return 30_000 if text.nil?

      m = text.match(/\A(\d+)(ms|s)?\z/)
      n = m && Integer(m[1], 10) * (m[2] == 's' ? 1000 : 1)
      raise UsageError, "--pg-wait must be milliseconds >= 1 (e.g. 30000 or 30s), got '#{text}'" if n.nil? || n < 1

      n
    end

    def self.read_flags(argv)
      given = {}
      args = argv.dup
      until args.empty?
        arg = args.shift
        raise UsageError, "unexpected argument '#{arg}' (see --help)" unless arg.start_with?('--')

        name, value = arg[2..].split('=', 2)
        raise UsageError, "unknown flag '--#{name}' (expected one of: #{VALUED.map { "--#{_1}" }.join(', ')})" unless VALUED.include?(name)

        value ||= args.shift or raise UsageError, "--#{name} needs a value (see --help)"
        given[name] = value
      end
      given
    end

    def self.check_http(url)
      return nil if url.nil? || url.empty?

      fix = 'use http://HOST:PORT, e.g. the URL `iolab backend http` prints'
      raise UsageError, "--http-backend '#{url}' is not an http:// URL: #{fix}" unless url.start_with?('http://')

      host = URI.parse(url).host rescue nil
      raise UsageError, "--http-backend '#{url}' is not a valid URL: #{fix}" if host.nil? || host.empty?

      url.chomp('/')
    end

    def self.check_pg(url)
      return nil if url.nil? || url.empty?

      fix = 'use postgres://USER@HOST:PORT/DB'
      raise UsageError, "--pg '#{url}' is not a PostgreSQL URL: #{fix}" unless url.match?(%r{\Apostgres(ql)?://})

      host = URI.parse(url).host rescue nil
      raise UsageError, "--pg '#{url}' is not a valid PostgreSQL URL: #{fix}" if host.nil? || host.empty?

      url
    end

    def self.check_mc(addr)
      return nil if addr.nil? || addr.empty?

      host, _, port = addr.rpartition(':')
      port = Integer(port, 10, exception: false)
      if host.empty? || port.nil? || !(1..65_535).cover?(port)
        raise UsageError, "--mc '#{addr}' is not HOST:PORT: use e.g. 127.0.0.1:11211"
      end

      addr
    end
  end
end
