# frozen_string_literal: true

require 'json'

# The contract's answers, written by hand so field order and wording match the
# Rust targets byte for byte: {"ok":true,"model":"pool","steps":3,"elapsed_ms":12.300}
# and {"ok":false,"error":"..."}.
module Iolab
  # A request the target refuses or a step that failed: the status and message it answers.
  class WorkError < StandardError
    attr_reader :status

    def initialize(status, message)
      @status = status
      super(message)
    end
  end

  module Answers
    JSON_TYPE = 'application/json'
    VALUE_TYPE = 'application/octet-stream'
    PROMETHEUS_TYPE = 'text/plain; version=0.0.4'

    MISSING_STEPS = "missing query parameter 'steps', e.g. /work?steps=sleep:100"
    VALUE_NEEDS_MC = 'body=value answers the value of the last mc step, but steps has none: ' \
                     'e.g. /work?steps=mc:test&body=value'

    module_function

    def ok(model, steps, elapsed_s)
      format('{"ok":true,"model":"%<m>s","steps":%<n>d,"elapsed_ms":%<ms>.3f}', m: model, n: steps, ms: elapsed_s * 1e3)
    end

    def error(message)
      text = message.to_s.dup.force_encoding(Encoding::UTF_8).scrub('?')
      "{\"ok\":false,\"error\":#{JSON.generate(text)}}"
    end

    def health = '{"ok":true}'

    def not_found(path)
      error("no such path '#{path}' (the contract has /work?steps=..., /health, /metrics)")
    end

    def method_not_allowed(method) = error("method #{method} not allowed (use GET)")
  end
end
