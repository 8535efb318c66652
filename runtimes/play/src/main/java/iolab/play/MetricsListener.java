// `--metrics-port`: GET /metrics on a second listener with one thread of its own (the JDK's
// built-in HTTP server), outside Play and Pekko, so a pool whose every thread sleeps, or a queue
// of connections Pekko cannot even parse, cannot keep the lab from reading the counters.
package iolab.play;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

final class MetricsListener {
    private final HttpServer server;

    MetricsListener(int port) throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
        server.createContext("/", MetricsListener::handle);
        server.setExecutor(Executors.newSingleThreadExecutor(r -> Thread.ofPlatform().daemon(true).name("iolab-metrics").unstarted(r)));
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    private static void handle(HttpExchange ex) throws IOException {
        try (ex) {
            boolean metrics = ex.getRequestURI().getPath().equals("/metrics") && ex.getRequestMethod().equals("GET");
            byte[] body = (metrics ? Counters.prometheus() : "not found\n").getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", metrics ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain");
            ex.sendResponseHeaders(metrics ? 200 : 404, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        }
    }
}
