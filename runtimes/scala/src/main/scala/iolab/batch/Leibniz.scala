package iolab.batch

/** The CPU task: `sum_{i=0}^{terms-1} 4 (-1)^i / (2i + 1)`, term by term as iolab computes it. */
object Leibniz {
  // Written once per series, so the JIT cannot drop the loop as dead code.
  @volatile private var sink = 0.0

  def apply(terms: Long): Double = {
    var acc = 0.0
    var sign = 4.0
    var i = 0L
    while (i < terms) {
      acc += sign / (2 * i + 1).toDouble
      sign = -sign
      i += 1
    }
    sink = acc
    acc
  }
}
