// The cpu step's work: the Leibniz series for pi, as crates/model/src/cpu.rs does it.
package iolab.play;

final class Cpu {
    private Cpu() {}

    /** Sink that keeps the JIT from dropping the loop as dead code. */
    private static volatile double sink;

    /** sum_{i=0}^{terms-1} 4 * (-1)^i / (2i + 1), term by term (cost linear in terms). */
    static double leibniz(long terms) {
        double acc = 0.0;
        double sign = 4.0;
        for (long i = 0; i < terms; i++) {
            acc += sign / (double) (2 * i + 1);
            sign = -sign;
        }
        sink = acc;
        return acc;
    }
}
