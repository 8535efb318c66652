// `loop-offload` (the article's async-blocking endpoint): each IO call is
// CompletableFuture.supplyAsync(...) on the JVM common pool (cores - 1 threads), or on a pool of
// `--offload` threads, and blocks that thread for the call's whole length. The article called
// supplyAsync without an executor; on a machine with 2 cores the JDK then starts a new thread per
// task instead (CompletableFuture uses the common pool only when its parallelism is above 1),
// so the common pool is named here explicitly: cores - 1 threads on any machine.
package iolab.play;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;

final class OffloadCalls implements AsyncRunner.IoCalls {
    private final Backends backends;
    private final ExecutorService pool;

    /** {@code threads}: the offload pool's size, or null for the JVM common pool. */
    OffloadCalls(Backends backends, Integer threads) {
        this.backends = backends;
        // A ForkJoinPool of its own, the common pool's kind: neither grows for Thread.sleep.
        this.pool = threads == null ? ForkJoinPool.commonPool() : new ForkJoinPool(threads);
    }

    /** Threads the calls can block at once. */
    int threads() {
        return ((ForkJoinPool) pool).getParallelism();
    }

    @Override
    public CompletionStage<Void> call(Step.Io io) {
        return switch (io.kind()) {
            case SLEEP -> {
                Counters.backendCall(Step.Kind.SLEEP);
                yield CompletableFuture.supplyAsync(() -> sleep(io.micros()), pool);
            }
            case HTTP -> CompletableFuture.supplyAsync(() -> {
                backends.http.callBlocking(io.micros());
                return null;
            }, pool);
            case PG, MC -> CompletableFuture.failedFuture(new WorkError(400, Backends.notConfigured(io.kind())));
        };
    }

    private static Void sleep(long micros) {
        try {
            Thread.sleep(Duration.ofNanos(micros * 1000));
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new WorkError(503, "interrupted while sleeping (the server is stopping)");
        }
    }
}
