// The contract's /metrics: plain counters, rendered as Prometheus text with the same
// names the Rust targets use.
package iolab

import java.lang.management.ManagementFactory
import java.util.concurrent.atomic.AtomicLong
import java.util.function.LongSupplier

object Counters {
    val inFlight = AtomicLong()
    val completed = AtomicLong()
    val rejected = AtomicLong()
    private val calls = Array(BackendKind.entries.size) { AtomicLong() }

    /** Requests waiting for a thread; set by the web stack that can see its queue. */
    @Volatile
    var queued: LongSupplier = LongSupplier { 0 }

    fun backendCall(kind: BackendKind) {
        calls[kind.ordinal].incrementAndGet()
    }

    fun calls(kind: BackendKind): Long = calls[kind.ordinal].get()

    /** Zero the counters (after a warm-up; nothing may be in flight). */
    fun reset() {
        completed.set(0)
        rejected.set(0)
        calls.forEach { it.set(0) }
    }

    /** Run one request's accounting around [body]. */
    inline fun <T> track(body: () -> T): T {
        inFlight.incrementAndGet()
        try {
            return body()
        } finally {
            inFlight.decrementAndGet()
            completed.incrementAndGet()
        }
    }

    fun prometheus(): String {
        val threads = ManagementFactory.getThreadMXBean().threadCount
        val b = StringBuilder()
        fun metric(name: String, type: String, help: String, value: Long) {
            b.append("# HELP ").append(name).append(' ').append(help).append('\n')
            b.append("# TYPE ").append(name).append(' ').append(type).append('\n')
            b.append(name).append(' ').append(value).append('\n')
        }
        metric("iolab_requests_in_flight", "gauge", "Requests being served.", inFlight.get())
        metric("iolab_requests_queued", "gauge", "Requests waiting for a thread.", queued.asLong)
        metric("iolab_requests_completed_total", "counter", "Requests answered.", completed.get())
        metric("iolab_requests_rejected_total", "counter", "Requests refused for lack of capacity.", rejected.get())
        metric("iolab_threads", "gauge", "Live JVM platform threads.", threads.toLong())
        b.append("# HELP iolab_backend_calls_total Backend calls made, by kind.\n")
        b.append("# TYPE iolab_backend_calls_total counter\n")
        for (kind in BackendKind.entries) {
            b.append("iolab_backend_calls_total{kind=\"").append(kind.label).append("\"} ")
                .append(calls(kind)).append('\n')
        }
        return b.toString()
    }
}
