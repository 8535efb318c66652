// Test helpers: a real target on a random loopback port, a plain HTTP client, and the `par` check.
package iolab

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.ObjectMapper
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.springframework.context.ConfigurableApplicationContext
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.Executors

/**
 * The `par` check every backend shares: under `loop-blocking` the loop thread waits for the
 * children one after another (at least [serialMs]); under every other model they overlap
 * (under [overlapMs]).
 */
fun assertPar(model: JvmModel, a: Answer, serialMs: Int, overlapMs: Int) {
    assertEquals(200, a.status, a.body)
    if (model == JvmModel.LOOP_BLOCKING) {
        assertTrue(a.millis >= serialMs, "${model.label}: ${a.millis} ms, the loop thread must wait for each child in turn")
    } else {
        assertTrue(a.millis < overlapMs, "${model.label}: ${a.millis} ms, children must overlap")
    }
}

/** One answer, with the wall time it took. */
class Answer(val status: Int, val contentType: String, val body: String, val millis: Double) {
    fun json(): JsonNode = ObjectMapper().readTree(body)
}

/** A target started in this JVM exactly as `main` starts it, on port 0. */
class Target(vararg options: String) : AutoCloseable {
    private val ctx: ConfigurableApplicationContext =
        start(arrayOf("--server.port=0", "--iolab.print-url=false", *options))
    val base: String = url(ctx.environment)

    /** Few client threads, so the JVM's thread count shows the server's threads. */
    private val executor = Executors.newFixedThreadPool(2)
    private val client: HttpClient = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1) // no h2c upgrade dance: load generators speak HTTP/1.1
        .executor(executor)
        .connectTimeout(Duration.ofSeconds(5))
        .build()

    private fun request(path: String) =
        HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30)).GET().build()

    fun get(path: String): Answer {
        val t = System.nanoTime()
        val r = client.send(request(path), HttpResponse.BodyHandlers.ofString())
        return Answer(r.statusCode(), r.headers().firstValue("content-type").orElse(""), r.body(), (System.nanoTime() - t) / 1e6)
    }

    /** The raw bytes of one answer's body, with its status and content type. */
    fun getBytes(path: String): Triple<Int, String, ByteArray> {
        val r = client.send(request(path), HttpResponse.BodyHandlers.ofByteArray())
        return Triple(r.statusCode(), r.headers().firstValue("content-type").orElse(""), r.body())
    }

    /** [n] requests at once; each answer with its own wall time. */
    fun burst(path: String, n: Int): List<Answer> {
        val futures = (1..n).map {
            val t = System.nanoTime()
            client.sendAsync(request(path), HttpResponse.BodyHandlers.ofString()).thenApply { r ->
                Answer(r.statusCode(), r.headers().firstValue("content-type").orElse(""), r.body(), (System.nanoTime() - t) / 1e6)
            }
        }
        CompletableFuture.allOf(*futures.toTypedArray()).get()
        return futures.map { it.get() }
    }

    /** One sample from `/metrics`, by full series name (e.g. `iolab_backend_calls_total{kind="sleep"}`). */
    fun metric(series: String): Double {
        val line = get("/metrics").body.lines().firstOrNull { it.startsWith("$series ") }
            ?: error("no $series in /metrics")
        return line.substringAfterLast(' ').toDouble()
    }

    override fun close() {
        client.close()
        executor.shutdownNow()
        ctx.close()
    }
}
