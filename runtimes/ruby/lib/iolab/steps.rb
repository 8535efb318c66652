# frozen_string_literal: true

# The workload language, ported byte for byte from crates/model/src/steps/parse.rs.
#
#     steps := item (',' item)*            a top-level list runs in sequence
#     item  := seq(steps) | par(steps) | leaf
#     leaf  := cpu:N | sleep:MS | http:MS | pg:MS | mc:KEY
#
# Positions in errors are byte offsets, as in Rust, so the parser walks the
# input's bytes. vectors/steps.json pins every message.
module Iolab
  # The backends an IO step can go to, in metric-label order.
  BACKENDS = %i[sleep http pg mc].freeze

  # Limits that keep one request's work bounded whatever a client sends.
  module Limits
    MAX_DEPTH = 16
    MAX_LEAVES = 1_000
    MAX_MS = 3_600_000.0
    MAX_MS_TEXT = '3600000'
    MAX_CPU_TERMS = 100_000_000_000
    MAX_KEY_LEN = 250
    MAX_INPUT_LEN = 16_384
  end

  # One step: kind is :cpu (arg = terms), :sleep/:http/:pg (arg = micros),
  # :mc (arg = key), :seq or :par (arg = children).
  Step = Struct.new(:kind, :arg) do
    def leaf? = !%i[seq par].include?(kind)
    def io? = BACKENDS.include?(kind)

    # Number of leaf steps: the contract's "steps" field.
    def leaf_count = leaf? ? 1 : arg.sum(&:leaf_count)

    # Every backend the workload calls.
    def backends
      return [] if kind == :cpu
      return [kind] if io?

      arg.flat_map(&:backends).uniq
    end

    # The canonical text: Steps.parse(step.canonical) == step.
    def canonical
      case kind
      when :cpu then "cpu:#{arg}"
      when :mc then "mc:#{arg}"
      when :seq, :par then "#{kind}(#{arg.map(&:canonical).join(',')})"
      else "#{kind}:#{Steps.millis_text(arg)}"
      end
    end
  end

  # A fault in a steps string, with the byte offset where it was found.
  class StepsError < StandardError
    attr_reader :detail, :position

    def initialize(detail, position)
      @detail = detail
      @position = position
      super("steps: #{detail} at #{position}")
    end
  end

  module Steps
    module_function

    # Milliseconds as text: whole numbers bare, fractions with up to 3 decimals.
    def millis_text(micros)
      ms, frac = micros.divmod(1000)
      frac.zero? ? ms.to_s : "#{ms}.#{format('%03d', frac).sub(/0+\z/, '')}"
    end

    # Parse and validate a steps string; raises StepsError.
    def parse(input)
      bytes = input.b
      if bytes.bytesize > Limits::MAX_INPUT_LEN
        raise StepsError.new("input longer than #{Limits::MAX_INPUT_LEN} bytes", Limits::MAX_INPUT_LEN)
      end

      Parser.new(bytes).top
    end
  end

  # A recursive-descent parser over the input's bytes.
  class Parser
    LEAVES = %w[cpu sleep http pg mc].freeze
    # Every word that starts a step, as the unknown-step message lists them (from LEAVES).
    STEP_WORDS = "#{(LEAVES + %w[seq]).join(', ')} or par"
    KEY_BYTE = /[A-Za-z0-9_.:-]/n

    def initialize(bytes)
      @s = bytes
      @pos = 0
      @leaves = 0
    end

    def top
      skip_ws
      raise err("empty workload: expected a step such as 'sleep:100'") if at_end?

      items = list(0)
      skip_ws
      raise err(peek == ')' ? "unexpected ')'" : "unexpected '#{peek_char}'") unless at_end?

      items.size == 1 ? items[0] : Step.new(:seq, items)
    end

    private

    def err(message) = StepsError.new(message, @pos)
    def at_end? = @pos >= @s.bytesize
    def peek = @s.byteslice(@pos, 1)

    # The whole character at the cursor, '?' where the rest is not UTF-8.
    def peek_char
      rest = @s.byteslice(@pos..).force_encoding(Encoding::UTF_8)
      rest.valid_encoding? && !rest.empty? ? rest[0] : '?'
    end

    def skip_ws
      @pos += 1 while [' ', "\t"].include?(peek)
    end

    # Advance over bytes matching pattern; the text passed over.
    def take(pattern)
      start = @pos
      @pos += 1 while !at_end? && pattern.match?(peek)
      @s.byteslice(start, @pos - start)
    end

    def list(depth)
      items = [item(depth)]
      loop do
        skip_ws
        return items unless peek == ','

        @pos += 1
        skip_ws
        items << item(depth)
      end
    end

    def item(depth)
      skip_ws
      start = @pos
      word = take(/[A-Za-z]/n)
      case word
      when 'seq', 'par' then group(word, depth)
      when *LEAVES then leaf(word, start)
      when ''
        raise err('expected a step') if at_end?

        raise err("expected a step, found '#{peek_char}'")
      else
        @pos = start
        raise err("unknown step '#{word}' (expected #{STEP_WORDS})")
      end
    end

    def group(word, depth)
      raise err("expected '(' after '#{word}'") unless peek == '('
      raise err("nesting deeper than #{Limits::MAX_DEPTH} levels") if depth + 1 > Limits::MAX_DEPTH

      @pos += 1
      skip_ws
      raise err("'#{word}(...)' needs at least one step") if peek == ')'

      children = list(depth + 1)
      skip_ws
      raise err("expected ')'") unless peek == ')'

      @pos += 1
      Step.new(word.to_sym, children)
    end

    def leaf(word, start)
      raise err("expected ':' after '#{word}'") unless peek == ':'

      @pos += 1
      @leaves += 1
      if @leaves > Limits::MAX_LEAVES
        @pos = start
        raise err("more than #{Limits::MAX_LEAVES} steps")
      end
      case word
      when 'cpu' then Step.new(:cpu, whole)
      when 'mc' then Step.new(:mc, key)
      else Step.new(word.to_sym, millis)
      end
    end

    def whole
      start = @pos
      digits = take(/[0-9]/n)
      raise err('expected a whole number of terms') if digits.empty?

      n = digits.to_i
      if n > Limits::MAX_CPU_TERMS
        @pos = start
        raise err("cpu terms above the limit of #{Limits::MAX_CPU_TERMS}")
      end
      n
    end

    def millis
      start = @pos
      int = take(/[0-9]/n)
      text = int
      if peek == '.'
        @pos += 1
        frac = take(/[0-9]/n)
        raise err("expected digits after '.'") if frac.empty?

        text = "#{int}.#{frac}"
      end
      if int.empty?
        @pos = start
        raise err('expected milliseconds, e.g. 200 or 0.5')
      end
      ms = Float(text)
      if ms > Limits::MAX_MS
        @pos = start
        raise err("#{text} ms is above the limit of #{Limits::MAX_MS_TEXT} ms")
      end
      (ms * 1000.0).round
    end

    def key
      start = @pos
      key = take(KEY_BYTE)
      raise err('expected a memcached key') if key.empty?

      if key.bytesize > Limits::MAX_KEY_LEN
        @pos = start
        raise err("memcached key longer than #{Limits::MAX_KEY_LEN} bytes")
      end
      key.force_encoding(Encoding::UTF_8)
    end
  end
end
