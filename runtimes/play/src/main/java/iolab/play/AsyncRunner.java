// `loop-offload` and `loop-async`: the handler returns a CompletionStage at once and gives its
// Play thread back; the steps are a chain of stages whose continuations (and cpu steps) run on
// Play's default dispatcher, the "loop". Only the IO leaves differ (IoCalls): a blocked thread of
// an offload pool, or a timer / non-blocking client with no thread held. par(...) starts every
// child at once and waits for all of them.
package iolab.play;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

final class AsyncRunner {
    /** How a model makes one IO call. */
    interface IoCalls {
        CompletionStage<Void> call(Step.Io io);
    }

    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final Executor loop;
    private final IoCalls io;

    AsyncRunner(Executor loop, IoCalls io) {
        this.loop = loop;
        this.io = io;
    }

    /** Start {@code step} from a loop thread; fails with a WorkError when a backend fails. */
    CompletionStage<Void> run(Step step) {
        return switch (step) {
            case Step.Cpu c -> {
                Cpu.leibniz(c.terms()); // on the loop, as the article's hello(...) ran
                yield DONE;
            }
            case Step.Io i -> io.call(i);
            case Step.Seq s -> seq(s.children());
            case Step.Par p -> par(p.children());
        };
    }

    private CompletionStage<Void> seq(List<Step> children) {
        CompletionStage<Void> chain = run(children.getFirst());
        for (Step child : children.subList(1, children.size())) {
            chain = chain.thenComposeAsync(v -> run(child), loop);
        }
        return chain;
    }

    /** Every child runs; the first error in written order wins. */
    private CompletionStage<Void> par(List<Step> children) {
        CompletableFuture<?>[] all = children.stream().map(c -> run(c).toCompletableFuture()).toArray(CompletableFuture[]::new);
        return CompletableFuture.allOf(all).handle((v, e) -> {
            for (CompletableFuture<?> f : all) {
                if (f.isCompletedExceptionally()) throw new CompletionException(unwrap(f.exceptionNow()));
            }
            return null;
        });
    }

    /** The real error inside a stage's wrapping. */
    static Throwable unwrap(Throwable e) {
        while (e instanceof CompletionException && e.getCause() != null) e = e.getCause();
        return e;
    }
}
