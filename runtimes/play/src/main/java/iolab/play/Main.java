// The launcher's Java side (runtimes/README.md): validate the flags, start Play under the model,
// the metrics listener, the warm-up, then print the URL line(s). SIGTERM / SIGINT stop it with
// exit code 0 within a few seconds.
package iolab.play;

import java.io.IOException;
import java.util.concurrent.ForkJoinPool;
import org.apache.pekko.actor.ActorSystem;
import play.routing.RoutingDsl;
import scala.concurrent.ExecutionContextExecutor;

public final class Main {
    private Main() {}

    /** Longest a SIGTERM may take: Pekko's coordinated shutdown waits for in-flight requests,
     *  which under `pool` may be asleep behind a long queue. */
    private static final long SHUTDOWN_GRACE_MS = 3_000;

    /** The status the JVM ends with once shutdown starts: 0 for a signal, else set before exit. */
    private static volatile int exitStatus = 0;

    /** The running server, once there is one. */
    private static volatile PlayServer running;

    public static void main(String[] args) {
        Settings s;
        try {
            s = Settings.parse(args, System.getenv());
        } catch (UsageError e) {
            System.err.println("error: " + e.getMessage());
            System.exit(2);
            return;
        }
        s.notes().forEach(System.err::println);
        try {
            run(s);
        } catch (Exception e) {
            System.err.println("error: the play target failed to start: " + Answers.causes(e));
            exitStatus = 1;
            System.exit(1);
        }
    }

    private static void run(Settings s) throws IOException, InterruptedException {
        // From here on a signal ends the JVM with exitStatus, also while Play starts or warms up.
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(Main::stop));
        Backends backends = new Backends(s.httpBackend() == null ? null : new HttpBackend(s.httpBackend()));
        OffloadCalls offload = s.model() == Model.LOOP_OFFLOAD ? new OffloadCalls(backends, s.offload()) : null;
        var components = PlayServer.components(PlayConfig.of(s), c -> {
            ActorSystem system = c.actorSystem();
            ExecutionContextExecutor loop = system.dispatcher();
            Endpoints endpoints = switch (s.model()) {
                case POOL -> new Endpoints(s.model(), backends, loop, new BlockingRunner(backends, loop), null);
                case LOOP_OFFLOAD -> new Endpoints(s.model(), backends, loop, null, new AsyncRunner(loop, offload));
                case LOOP_ASYNC -> new Endpoints(s.model(), backends, loop, null,
                        new AsyncRunner(loop, new TimerCalls(backends, system.scheduler(), loop)));
            };
            return endpoints.router(RoutingDsl.fromComponents(c));
        });
        PlayServer play = PlayServer.start(components, s.port());
        running = play;
        ForkJoinPool pool = PlayServer.defaultPool(play.app.actorSystem());
        if (pool != null) Counters.queued = () -> pool.getQueuedSubmissionCount() + pool.getQueuedTaskCount();
        MetricsListener metrics = s.metricsPort() == null ? null : new MetricsListener(s.metricsPort());

        String url = "http://127.0.0.1:" + play.port();
        System.err.println("play: model " + s.model().label + " on " + url + "; Play's default dispatcher: fork-join, "
                + (pool == null ? "?" : pool.getParallelism()) + " threads"
                + (offload == null ? "" : "; offload pool: " + offload.threads() + " threads")
                + (s.httpBackend() == null ? "" : "; http backend " + s.httpBackend()));
        if (s.warmup() > 0) {
            long t0 = System.nanoTime();
            Warmup.run(url, s.warmup());
            System.err.printf("play: warm-up of %d requests took %.1f s%n", s.warmup(), (System.nanoTime() - t0) / 1e9);
        }
        Counters.reset();
        System.out.println(url);
        if (metrics != null) System.out.println("metrics http://127.0.0.1:" + metrics.port());
        System.out.flush();
    }

    /** Stop Play (Pekko's coordinated shutdown), bounded by the grace, then end with exitStatus. */
    private static void stop() {
        Thread.ofPlatform().daemon(true).start(() -> {
            try {
                Thread.sleep(SHUTDOWN_GRACE_MS);
            } catch (InterruptedException e) {
                // halt now
            }
            Runtime.getRuntime().halt(exitStatus);
        });
        try {
            if (running != null) running.server.stop();
        } catch (RuntimeException e) {
            System.err.println("play: stopping: " + Answers.causes(e));
        }
        Runtime.getRuntime().halt(exitStatus);
    }
}
