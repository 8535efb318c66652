# frozen_string_literal: true

require_relative 'answers'
require_relative 'counters'

# Which backends a target can reach: the embedded `sleep`, and `http`, `pg` and
# `mc` when their addresses are given. A request naming another one is refused
# before any of its work runs, with the Rust targets' message.
module Iolab
  module Backends
    FLAGS = {
      sleep: 'nothing (sleep is embedded)', http: '--http-backend URL', pg: '--pg URL', mc: '--mc HOST:PORT'
    }.freeze

    # Longest wait for a pooled memcached connection (the Rust targets' mc_wait).
    MC_WAIT_S = 30
    # Longest a connect may take before a backend counts as unavailable.
    CONNECT_TIMEOUT_S = 5
    # Longest one memcached get may stall (a hung server must not hang a target).
    IO_TIMEOUT_S = 30

    module_function

    # Raise WorkError (400) for the first backend `step` needs that `settings`
    # does not configure, counting the call as the Rust targets do.
    def check!(step, settings)
      configured = { sleep: true, http: settings.http_backend, pg: settings.pg, mc: settings.mc }
      BACKENDS.each do |kind|
        next unless step.backends.include?(kind) && !configured[kind]

        Counters.backend_call(kind)
        raise WorkError.new(400, "backend '#{kind}' not configured: start the target with #{FLAGS[kind]} " \
                                 '(see `iolab serve --help`)')
      end
    end

    def unavailable(kind, detail) = WorkError.new(503, "backend '#{kind}' unavailable: #{detail}")
    def failed(kind, detail) = WorkError.new(502, "backend '#{kind}': #{detail}")
    def pool_timeout(kind, ms) = WorkError.new(503, "backend '#{kind}' pool timeout after #{ms} ms")

    def mc_miss(key)
      failed(:mc, "key '#{key}' not found (store it with `iolab backend mc-fill --key #{key}`)")
    end

    # SQLSTATE classes 08 (connection), 53 (resources), 57P (shutdown): PostgreSQL is not there for us.
    def pg_unavailable_state?(state)
      state.nil? || state.start_with?('08', '53', '57P')
    end

    # The delay service URL of one http step (milliseconds as the Rust targets write them).
    def delay_path(base_path, micros) = "#{base_path}/delay?ms=#{Steps.millis_text(micros)}"
  end
end
