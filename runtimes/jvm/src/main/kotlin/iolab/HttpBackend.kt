// `http:MS`: `GET {base}/delay?ms=MS` on iolab's delay service (`iolab backend http`),
// through Spring's blocking RestClient (over the JDK HttpClient) or its non-blocking
// WebClient (over Reactor Netty). Neither limits concurrency, as in the Rust targets:
// the delay service is not the resource under study.
package iolab

import kotlinx.coroutines.reactor.awaitSingle
import org.springframework.http.client.JdkClientHttpRequestFactory
import org.springframework.http.client.reactive.ReactorClientHttpConnector
import org.springframework.web.client.RestClient
import org.springframework.web.client.RestClientResponseException
import org.springframework.web.reactive.function.client.WebClient
import org.springframework.web.reactive.function.client.WebClientResponseException
import reactor.netty.http.client.HttpClient as NettyHttpClient
import reactor.netty.resources.ConnectionProvider
import java.net.http.HttpClient
import java.time.Duration

class HttpBackend(private val base: String) {
    private val restClient: RestClient by lazy {
        val jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(CONNECT_TIMEOUT).build()
        RestClient.builder().requestFactory(JdkClientHttpRequestFactory(jdk)).build()
    }

    private val webClient: WebClient by lazy {
        // Reactor Netty's default pool (16 connections, 32 waiting) would cap concurrency.
        val pool = ConnectionProvider.builder("iolab-http")
            .maxConnections(MAX_CONNECTIONS)
            .pendingAcquireMaxCount(-1)
            .build()
        val netty = NettyHttpClient.create(pool)
            .option(io.netty.channel.ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT.toMillis().toInt())
        WebClient.builder().clientConnector(ReactorClientHttpConnector(netty)).build()
    }

    private fun url(micros: Long) = "$base/delay?ms=${millisText(micros)}"

    /** One delay call on the calling thread. */
    fun callBlocking(micros: Long) {
        Counters.backendCall(BackendKind.HTTP)
        try {
            restClient.get().uri(url(micros)).retrieve().toBodilessEntity()
        } catch (e: RestClientResponseException) {
            throw failed(e.statusCode.value())
        } catch (e: Exception) {
            throw unavailable(e)
        }
    }

    /** One delay call without holding a thread. */
    suspend fun callAsync(micros: Long) {
        Counters.backendCall(BackendKind.HTTP)
        try {
            webClient.get().uri(url(micros)).retrieve().toBodilessEntity().awaitSingle()
        } catch (e: java.util.concurrent.CancellationException) {
            throw e
        } catch (e: WebClientResponseException) {
            throw failed(e.statusCode.value())
        } catch (e: Exception) {
            throw unavailable(e)
        }
    }

    companion object {
        private val CONNECT_TIMEOUT: Duration = Duration.ofSeconds(5)
        private const val MAX_CONNECTIONS = 4096

        private fun failed(status: Int) = WorkError(502, "backend 'http': delay service answered $status")

        private fun unavailable(e: Exception) = WorkError(503, "backend 'http' unavailable: ${causes(e)}")

        /** An `http://HOST:PORT` base URL, else a usage error naming the fix. */
        fun checkUrl(url: String): String {
            val fix = "use http://HOST:PORT, e.g. the URL `iolab backend http` prints"
            if (!url.startsWith("http://")) throw UsageError("--http-backend '$url' is not an http:// URL: $fix")
            val ok = runCatching { java.net.URI(url).host != null }.getOrDefault(false)
            if (!ok) throw UsageError("--http-backend '$url' is not a valid URL: $fix")
            return url.trimEnd('/')
        }
    }
}
