// The contract's /metrics: plain counters, rendered as Prometheus text with the names the Rust
// targets use. Served by Play and by the separate metrics listener alike.
package iolab.play;

import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

public final class Counters {
    private Counters() {}

    static final AtomicLong inFlight = new AtomicLong();
    static final AtomicLong completed = new AtomicLong();
    private static final AtomicLongArray calls = new AtomicLongArray(Step.Kind.values().length);

    /** Tasks waiting for a thread of Play's pool; set once the server runs (PlayServer). */
    static volatile LongSupplier queued = () -> 0;

    static void backendCall(Step.Kind kind) {
        calls.incrementAndGet(kind.ordinal());
    }

    /** A request starts being served. */
    static void begin() {
        inFlight.incrementAndGet();
    }

    /** A request has its answer (whatever it is). */
    static void end() {
        inFlight.decrementAndGet();
        completed.incrementAndGet();
    }

    /** Zero the counters (after the warm-up; nothing is in flight then). */
    static void reset() {
        completed.set(0);
        for (int i = 0; i < calls.length(); i++) calls.set(i, 0);
    }

    static String prometheus() {
        StringBuilder b = new StringBuilder(1024);
        metric(b, "iolab_requests_in_flight", "gauge", "Requests being served.", inFlight.get());
        metric(b, "iolab_requests_queued", "gauge",
                "Tasks waiting for a thread of Play's default dispatcher (a request that waits holds one).",
                queued.getAsLong());
        metric(b, "iolab_requests_completed_total", "counter", "Requests answered.", completed.get());
        // Play never refuses a request itself: a full pool queues it.
        metric(b, "iolab_requests_rejected_total", "counter", "Requests refused for lack of capacity.", 0);
        metric(b, "iolab_threads", "gauge", "Live JVM threads.", ManagementFactory.getThreadMXBean().getThreadCount());
        b.append("# HELP iolab_backend_calls_total Backend calls made, by kind.\n");
        b.append("# TYPE iolab_backend_calls_total counter\n");
        for (Step.Kind kind : Step.Kind.values()) {
            b.append("iolab_backend_calls_total{kind=\"").append(kind.label).append("\"} ")
                    .append(calls.get(kind.ordinal())).append('\n');
        }
        return b.toString();
    }

    private static void metric(StringBuilder b, String name, String type, String help, long value) {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        b.append(name).append(' ').append(value).append('\n');
    }
}
