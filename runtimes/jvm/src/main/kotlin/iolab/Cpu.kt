// The CPU step's work: the Leibniz series for pi, as crates/model/src/cpu.rs does it.
package iolab

/** Sink that keeps the JIT from dropping the loop as dead code. */
@Volatile
private var sink = 0.0

/** `sum_{i=0}^{terms-1} 4 * (-1)^i / (2i + 1)`, term by term (cost linear in [terms]). */
fun leibniz(terms: Long): Double {
    var acc = 0.0
    var sign = 4.0
    var i = 0L
    while (i < terms) {
        acc += sign / (2 * i + 1).toDouble()
        sign = -sign
        i++
    }
    sink = acc
    return acc
}
