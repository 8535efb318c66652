// A timing check for ./test: N requests of GET URL sent at once, each on its own connection,
// timed from the first send to the last answer (all must be 200), and judged against
// [LO_MS, HI_MS]. The connections are opened (and the client warmed up) by an untimed round of
// GET /health first, so the time is the server's, not TCP set-up's or the client's class loading.
// Waiting only makes a run slower: below LO fails at once (the model overlapped what it must
// not), above HI is retried up to ATTEMPTS times (a busy shared machine), then fails.
//   Probe URL N LO_MS HI_MS [ATTEMPTS]     prints one line per attempt; exit 0 when within
package iolab.play.check;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

public final class Probe {
    private Probe() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 4) throw new IllegalArgumentException("usage: Probe URL N LO_MS HI_MS [ATTEMPTS]");
        URI uri = URI.create(args[0]);
        int n = Integer.parseInt(args[1]);
        long lo = Long.parseLong(args[2]);
        long hi = Long.parseLong(args[3]);
        int attempts = args.length > 4 ? Integer.parseInt(args[4]) : 3;
        try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            HttpRequest work = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(60)).build();
            HttpRequest health = HttpRequest.newBuilder(uri.resolve("/health")).timeout(Duration.ofSeconds(60)).build();
            for (int attempt = 1; attempt <= attempts; attempt++) {
                round(client, health, n);
                long t0 = System.nanoTime();
                int ok = round(client, work, n);
                long ms = (System.nanoTime() - t0) / 1_000_000;
                String verdict = ok != n ? "FAIL (" + (n - ok) + " answers not 200)"
                        : ms < lo ? "FAIL (below " + lo + " ms)"
                        : ms > hi ? (attempt < attempts ? "slow, again" : "FAIL (above " + hi + " ms)")
                        : "ok";
                System.out.println("  " + n + " x " + uri.getRawPath() + "?" + uri.getRawQuery() + ": " + ms + " ms, expected "
                        + lo + ".." + hi + ": " + verdict);
                if (verdict.equals("ok")) System.exit(0);
                if (verdict.startsWith("FAIL")) System.exit(1);
            }
        }
    }

    /** Send {@code n} copies of {@code req} at once; the number answered 200. */
    private static int round(HttpClient client, HttpRequest req, int n) {
        List<CompletableFuture<HttpResponse<Void>>> all = new ArrayList<>();
        for (int i = 0; i < n; i++) all.add(client.sendAsync(req, HttpResponse.BodyHandlers.discarding()));
        int ok = 0;
        for (CompletableFuture<HttpResponse<Void>> f : all) {
            try {
                if (f.join().statusCode() == 200) ok++;
            } catch (RuntimeException e) {
                // counted as not 200
            }
        }
        return ok;
    }
}
