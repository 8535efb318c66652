// `--metrics-port`: the contract's /metrics (and /health) on a listener of its own, served by
// one thread of the JDK's HttpServer that Tomcat's pool and Netty's loops never touch, so a
// saturated pool or a blocked loop cannot starve the lab's view of the target (Spring Boot's
// management port does the same).
package iolab

import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.util.concurrent.Executors

object MetricsListener {
    /** Start it on 127.0.0.1:[port] (0: a free one); its URL. */
    fun start(port: Int): String {
        val server = HttpServer.create(InetSocketAddress("127.0.0.1", port), 64)
        server.createContext("/metrics") { answer(it, 200, "text/plain; version=0.0.4", Counters.prometheus()) }
        server.createContext("/health") { answer(it, 200, "application/json", "{\"ok\":true}") }
        server.createContext("/") { answer(it, 404, "application/json", "{\"ok\":false,\"error\":\"the metrics listener serves /metrics\"}") }
        server.executor = Executors.newSingleThreadExecutor { r ->
            Thread.ofPlatform().daemon(true).name("iolab-metrics").unstarted(r)
        }
        server.start()
        return "http://127.0.0.1:${server.address.port}"
    }

    private fun answer(ex: HttpExchange, status: Int, type: String, body: String) {
        val bytes = body.toByteArray()
        ex.responseHeaders.add("Content-Type", type)
        ex.sendResponseHeaders(status, bytes.size.toLong())
        ex.responseBody.use { it.write(bytes) }
    }
}
