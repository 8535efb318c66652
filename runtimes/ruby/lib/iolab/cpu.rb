# frozen_string_literal: true

# The cpu step's work: the Leibniz series for pi, as crates/model/src/cpu.rs does it.
module Iolab
  module Cpu
    module_function

    # sum_{i=0}^{terms-1} 4 * (-1)^i / (2i + 1), term by term (cost linear in terms).
    # Pure Ruby on purpose: it holds the GVL, as a Ruby app's own computation would.
    def leibniz(terms)
      acc = 0.0
      sign = 4.0
      i = 0
      while i < terms
        acc += sign / (2 * i + 1)
        sign = -sign
        i += 1
      end
      acc
    end
  end
end
