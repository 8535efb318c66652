// JIT warm-up: a JVM serves its first few thousand requests interpreted, many times slower
// than once compiled (on the shared 2-core machine the first ~3,000 requests of a fresh
// target took over a second each). With `--warmup N` the target sends itself N small
// requests over loopback before it prints its URL, as JMH runs warm-up iterations before
// measuring, then zeroes its counters so /metrics starts from a clean slate.
package iolab

import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.Duration
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger

object Warmup {
    /**
     * Client threads sending at once, each on its own connection. 8 were too few: after 5,000
     * requests from 8 clients a fresh `virtual` target on one CPU still timed out 40% of its
     * first 4 s at 1,000 req/s, then held 2,000 req/s at p99 108 ms. Many connections and
     * more requests (C2 compiles a method after thousands of calls) reach the paths the
     * measured load takes.
     */
    private const val CLIENTS = 32

    /** [n] requests of `GET {base}/work?steps=sleep:1` (and one `/nope`), then zeroed counters. */
    fun run(base: String, n: Int) {
        val executor = Executors.newFixedThreadPool(2)
        val client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(executor).build()
        val work = HttpRequest.newBuilder(URI.create("$base/work?steps=sleep:1")).timeout(Duration.ofSeconds(30)).build()
        val other = listOf("/health", "/metrics", "/nope").map {
            HttpRequest.newBuilder(URI.create(base + it)).timeout(Duration.ofSeconds(30)).build()
        }
        val left = AtomicInteger(n)
        val clients = (1..CLIENTS).map {
            Thread.ofPlatform().daemon(true).start {
                while (left.getAndDecrement() > 0) {
                    runCatching { client.send(work, HttpResponse.BodyHandlers.discarding()) }
                }
            }
        }
        clients.forEach(Thread::join)
        other.forEach { r -> runCatching { client.send(r, HttpResponse.BodyHandlers.discarding()) } }
        client.close()
        executor.shutdownNow()
        Counters.reset()
    }
}
