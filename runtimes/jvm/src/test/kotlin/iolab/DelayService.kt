// A stand-in for iolab's HTTP delay service (`iolab backend http`) in tests: the same
// `GET /delay?ms=MS` on a real loopback socket, one virtual thread per call, counting hits.
// Under `/broken/` it answers 500, for the 502 path.
package iolab

import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.time.Duration
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicLong

class DelayService : AutoCloseable {
    val hits = AtomicLong()
    private val server = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 1000)
    val url: String

    init {
        server.executor = Executors.newVirtualThreadPerTaskExecutor()
        server.createContext("/delay") { ex -> delay(ex) }
        server.createContext("/broken/delay") { ex -> answer(ex, 500, "broken\n") }
        server.start()
        url = "http://127.0.0.1:${server.address.port}"
    }

    private fun delay(ex: HttpExchange) {
        val ms = ex.requestURI.rawQuery.orEmpty().split('&').firstNotNullOfOrNull { it.removePrefix("ms=").takeIf { v -> v != it } }
            ?.toDoubleOrNull()
        if (ms == null) return answer(ex, 400, "missing ms\n")
        Thread.sleep(Duration.ofNanos((ms * 1e6).toLong()))
        hits.incrementAndGet()
        answer(ex, 200, "$ms\n")
    }

    private fun answer(ex: HttpExchange, status: Int, body: String) {
        val bytes = body.toByteArray()
        ex.sendResponseHeaders(status, bytes.size.toLong())
        ex.responseBody.use { it.write(bytes) }
    }

    override fun close() = server.stop(0)
}
