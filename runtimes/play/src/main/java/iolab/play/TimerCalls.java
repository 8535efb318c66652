// `loop-async` (the article's async-non-blocking endpoint): a sleep is a future completed by the
// Pekko scheduler's timer (actorSystem.scheduler().scheduleOnce, as the article did), an http call
// is the JDK HttpClient's sendAsync. No thread is held while a request waits. The scheduler ticks
// every 10 ms (pekko.scheduler.tick-duration) and never fires early.
package iolab.play;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.Scheduler;
import scala.concurrent.ExecutionContext;

final class TimerCalls implements AsyncRunner.IoCalls {
    private final Backends backends;
    private final Scheduler scheduler;
    private final ExecutionContext loop;

    TimerCalls(Backends backends, Scheduler scheduler, ExecutionContext loop) {
        this.backends = backends;
        this.scheduler = scheduler;
        this.loop = loop;
    }

    @Override
    public CompletionStage<Void> call(Step.Io io) {
        return switch (io.kind()) {
            case SLEEP -> {
                Counters.backendCall(Step.Kind.SLEEP);
                CompletableFuture<Void> done = new CompletableFuture<>();
                scheduler.scheduleOnce(Duration.ofNanos(io.micros() * 1000), () -> done.complete(null), loop);
                yield done;
            }
            case HTTP -> backends.http.callAsync(io.micros());
            case PG, MC -> CompletableFuture.failedFuture(new WorkError(400, Backends.notConfigured(io.kind())));
        };
    }
}
