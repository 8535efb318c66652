// The contract's three paths as a Play RoutingDsl router: /work, /health, /metrics (anything else
// gets Play's own 404). `pool` routes /work to a synchronous action (routingTo: Play runs it on
// its default dispatcher and the thread is held until the Result is returned); the loop models
// route it to an asynchronous one (routingAsync: the thread is given back at once).
package iolab.play;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import play.mvc.Http;
import play.mvc.Result;
import play.mvc.Results;
import play.routing.Router;
import play.routing.RoutingDsl;

final class Endpoints {
    private static final String JSON = "application/json";
    private static final String PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8";

    private final Model model;
    private final Backends backends;
    private final Executor loop;
    private final BlockingRunner blocking;
    private final AsyncRunner async;

    /** One of {@code blocking} (pool) or {@code async} (loop models) is null. */
    Endpoints(Model model, Backends backends, Executor loop, BlockingRunner blocking, AsyncRunner async) {
        this.model = model;
        this.backends = backends;
        this.loop = loop;
        this.blocking = blocking;
        this.async = async;
    }

    Router router(RoutingDsl dsl) {
        if (blocking != null) {
            dsl.GET("/work").routingTo(this::workBlocking);
        } else {
            dsl.GET("/work").routingAsync(this::workAsync);
        }
        return dsl.GET("/health").routingTo(req -> json(200, Answers.health(model)))
                .GET("/metrics").routingTo(req -> Results.ok(Counters.prometheus()).as(PROMETHEUS))
                .build();
    }

    private static Result json(int status, String body) {
        return Results.status(status, body).as(JSON);
    }

    private static Result failure(Throwable e) {
        if (e instanceof WorkError w) return json(w.status, Answers.error(w.getMessage()));
        return json(500, Answers.error("internal error: " + Answers.causes(e)));
    }

    private Step plan(Http.Request req) {
        return backends.plan(req.queryString("steps").orElse(null), req.queryString("body").orElse(null));
    }

    /** sync-blocking: the whole request on this thread. */
    private Result workBlocking(Http.Request req) {
        long start = System.nanoTime();
        Counters.begin();
        try {
            Step step = plan(req);
            blocking.run(step);
            return json(200, Answers.ok(model, step.leafCount(), System.nanoTime() - start));
        } catch (RuntimeException e) {
            return failure(e);
        } finally {
            Counters.end();
        }
    }

    /** async: the answer is the last stage of the chain, applied on the loop as the article did. */
    private CompletionStage<Result> workAsync(Http.Request req) {
        long start = System.nanoTime();
        Counters.begin();
        Step step;
        try {
            step = plan(req);
        } catch (RuntimeException e) {
            Counters.end();
            return CompletableFuture.completedFuture(failure(e));
        }
        CompletionStage<Void> done;
        try {
            done = async.run(step);
        } catch (RuntimeException e) {
            done = CompletableFuture.failedFuture(e);
        }
        return done.handleAsync((v, e) -> {
            Counters.end();
            return e == null
                    ? json(200, Answers.ok(model, step.leafCount(), System.nanoTime() - start))
                    : failure(AsyncRunner.unwrap(e));
        }, loop);
    }
}
