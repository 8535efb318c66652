// `pool` (the article's sync-blocking endpoint): the handler runs on a thread of Play's default
// dispatcher and every step blocks it (Thread.sleep, a blocking HTTP call, cpu in place), so a
// request holds its pool thread from start to end.
//
// par(...) borrows threads of the same pool, fork/join style, as the Rust `pool` model does: the
// first child runs here, the others are queued on the pool; when its own child is done the parent
// takes back any child no thread has started yet and runs it itself, so a pool whose every thread
// waits for children never deadlocks. The wait is a plain monitor wait: a ForkJoinPool does not
// add threads for it (it would for CompletableFuture.join), so the pool keeps its size.
package iolab.play;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

final class BlockingRunner {
    private final Backends backends;
    private final Executor pool;

    BlockingRunner(Backends backends, Executor pool) {
        this.backends = backends;
        this.pool = pool;
    }

    /** Run {@code step} on this thread; throws WorkError when a backend fails. */
    void run(Step step) {
        switch (step) {
            case Step.Cpu c -> Cpu.leibniz(c.terms());
            case Step.Io io -> io(io);
            case Step.Seq s -> s.children().forEach(this::run);
            case Step.Par p -> fanOut(p.children());
        }
    }

    private void io(Step.Io io) {
        switch (io.kind()) {
            case SLEEP -> sleep(io.micros());
            case HTTP -> backends.http.callBlocking(io.micros());
            // Backends.plan refuses these before anything runs.
            case PG, MC -> throw new WorkError(400, Backends.notConfigured(io.kind()));
        }
    }

    private static void sleep(long micros) {
        Counters.backendCall(Step.Kind.SLEEP);
        try {
            Thread.sleep(Duration.ofNanos(micros * 1000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new WorkError(503, "interrupted while sleeping (the server is stopping)");
        }
    }

    /** Every child runs; the first error in written order wins. */
    private void fanOut(List<Step> children) {
        List<Child> queued = new ArrayList<>();
        for (Step child : children.subList(1, children.size())) {
            Child c = new Child(child);
            queued.add(c);
            pool.execute(c);
        }
        RuntimeException first = attempt(children.getFirst());
        for (Child c : queued) {
            RuntimeException e = c.claim() ? attempt(c.step) : c.await();
            if (first == null) first = e;
        }
        if (first != null) throw first;
    }

    private RuntimeException attempt(Step step) {
        try {
            run(step);
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    /** A par child queued on the pool: run by whoever claims it first. */
    private final class Child implements Runnable {
        final Step step;
        private final AtomicBoolean claimed = new AtomicBoolean();
        private boolean done;
        private RuntimeException error;

        Child(Step step) {
            this.step = step;
        }

        boolean claim() {
            return claimed.compareAndSet(false, true);
        }

        @Override
        public void run() {
            if (!claim()) return;
            RuntimeException e = attempt(step);
            synchronized (this) {
                error = e;
                done = true;
                notifyAll();
            }
        }

        synchronized RuntimeException await() {
            boolean interrupted = false;
            while (!done) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
            return error;
        }
    }
}
