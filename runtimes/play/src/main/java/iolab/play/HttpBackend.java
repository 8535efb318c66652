// `http:MS`: GET {base}/delay?ms=MS on iolab's delay service. Blocking models use
// HttpURLConnection (plain blocking socket reads: a ForkJoinPool does not notice them, as it
// does not notice Thread.sleep, so the pool under study is not silently grown; the JDK
// HttpClient's blocking send() waits in CompletableFuture.get, which makes a ForkJoinPool add
// threads). loop-async uses the JDK HttpClient's sendAsync: no thread waits for the answer.
// Neither limits concurrency: the delay service is not the resource under study.
package iolab.play;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

final class HttpBackend {
    private static final int CONNECT_TIMEOUT_MS = 5_000;

    private final String base;
    private final HttpClient client;

    HttpBackend(String base) {
        this.base = base;
        // Idle keep-alive connections HttpURLConnection keeps per host (JDK default 5).
        System.setProperty("http.maxConnections", "256");
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofMillis(CONNECT_TIMEOUT_MS))
                .build();
    }

    private URI uri(long micros) {
        return URI.create(base + "/delay?ms=" + Step.millisText(micros));
    }

    /** One delay call, blocking the calling thread until the whole answer is read. */
    void callBlocking(long micros) {
        Counters.backendCall(Step.Kind.HTTP);
        HttpURLConnection c = null;
        try {
            c = (HttpURLConnection) uri(micros).toURL().openConnection();
            c.setConnectTimeout(CONNECT_TIMEOUT_MS);
            int status = c.getResponseCode();
            if (status / 100 != 2) throw failed(status);
            // Reading to the end hands the connection back to the keep-alive cache.
            try (InputStream in = c.getInputStream()) {
                in.transferTo(OutputStream.nullOutputStream());
            }
        } catch (IOException e) {
            if (c != null) c.disconnect();
            throw unavailable(e);
        }
    }

    /** One delay call without holding a thread: completes when the answer has arrived. */
    CompletionStage<Void> callAsync(long micros) {
        Counters.backendCall(Step.Kind.HTTP);
        HttpRequest request = HttpRequest.newBuilder(uri(micros)).GET().build();
        CompletableFuture<Void> done = new CompletableFuture<>();
        client.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((resp, e) -> {
            if (e != null) {
                done.completeExceptionally(unavailable(e instanceof CompletionException && e.getCause() != null ? e.getCause() : e));
            } else if (resp.statusCode() / 100 != 2) {
                done.completeExceptionally(failed(resp.statusCode()));
            } else {
                done.complete(null);
            }
        });
        return done;
    }

    private static WorkError failed(int status) {
        return new WorkError(502, "backend 'http': delay service answered " + status);
    }

    private static WorkError unavailable(Throwable e) {
        return new WorkError(503, "backend 'http' unavailable: " + Answers.causes(e));
    }
}
