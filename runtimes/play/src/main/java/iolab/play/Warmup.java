// JIT warm-up (as runtimes/jvm Warmup.kt): a JVM serves its first few thousand requests
// interpreted, many times slower than once compiled. With `--warmup N` the target sends itself N
// small requests over loopback from many connections before it prints its URL, then the caller
// zeroes the counters so /metrics starts clean.
package iolab.play;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

final class Warmup {
    private Warmup() {}

    /** Client threads sending at once, each on its own connection. */
    private static final int CLIENTS = 32;

    /** {@code n} requests of GET {base}/work?steps=sleep:1, then one of each other path. */
    static void run(String base, int n) throws InterruptedException {
        ExecutorService executor = Executors.newFixedThreadPool(2);
        try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(executor).build()) {
            HttpRequest work = get(base + "/work?steps=sleep:1");
            AtomicInteger left = new AtomicInteger(n);
            List<Thread> clients = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                clients.add(Thread.ofPlatform().daemon(true).start(() -> {
                    while (left.getAndDecrement() > 0) {
                        try {
                            client.send(work, HttpResponse.BodyHandlers.discarding());
                        } catch (Exception e) {
                            // a warm-up request that fails is only a request less
                        }
                    }
                }));
            }
            for (Thread t : clients) t.join();
            for (String path : List.of("/health", "/metrics", "/nope", "/work?steps=nap:1")) {
                try {
                    client.send(get(base + path), HttpResponse.BodyHandlers.discarding());
                } catch (Exception e) {
                    // as above
                }
            }
        } finally {
            executor.shutdownNow();
        }
    }

    private static HttpRequest get(String url) {
        return HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build();
    }
}
