# frozen_string_literal: true

require_relative 'steps'
require_relative 'answers'

# A /work request's query, read as crates/servers/src/routes.rs reads it: the
# first `steps=` and `body=` pairs, percent-decoded with the same error texts.
module Iolab
  # A parsed /work request: the workload and whether to answer with the fetched value.
  Work = Struct.new(:step, :value_body)

  module Query
    module_function

    # The Work asked for by query string `query` (nil: none); raises WorkError (400).
    def work(query)
      text = param(query, 'steps') or raise WorkError.new(400, Answers::MISSING_STEPS)
      step = begin
        Steps.parse(text)
      rescue StepsError => e
        raise WorkError.new(400, e.message)
      end
      value_body = case (body = param(query, 'body'))
                   when nil, 'json' then false
                   when 'value' then true
                   else raise WorkError.new(400, "query parameter 'body' is '#{body}': expected 'json' (the default) or 'value'")
                   end
      raise WorkError.new(400, Answers::VALUE_NEEDS_MC) if value_body && !step.backends.include?(:mc)

      Work.new(step, value_body)
    end

    # The first value of query parameter `name`, percent-decoded, or nil.
    def param(query, name)
      return nil if query.nil?

      prefix = "#{name}="
      pair = query.split('&').find { |p| p.start_with?(prefix) }
      pair && percent_decode(pair.delete_prefix(prefix))
    end

    # Decode %XX escapes and '+' (form encoding's space).
    def percent_decode(raw)
      b = raw.b
      out = String.new(capacity: b.bytesize, encoding: Encoding::BINARY)
      i = 0
      while i < b.bytesize
        c = b.getbyte(i)
        if c == 0x25 # '%'
          hex = b.byteslice(i + 1, 2)
          unless hex&.match?(/\A[0-9A-Fa-f]{2}\z/n)
            raise WorkError.new(400, "bad percent-encoding in query at #{i}: expected %XX with two hex digits")
          end

          out << hex.to_i(16).chr
          i += 3
        else
          out << (c == 0x2B ? 0x20 : c).chr
          i += 1
        end
      end
      out.force_encoding(Encoding::UTF_8)
      raise WorkError.new(400, 'query is not UTF-8 after percent-decoding') unless out.valid_encoding?

      out
    end
  end
end
