// The contract's held connections (runtimes/README.md, "Held connections"; the Rust reference is
// crates/servers/src/held.rs), once per web stack:
// - GET /ws[?steps=...]: a WebSocket; each message runs the URL's steps as a /work request would
//   (counted as one), then is echoed unchanged; steps that fail close it with 1011, a client
//   silent for HELD_IDLE with 1001.
// - GET /events[?every=100ms]: text/event-stream, the first event at once, then one every
//   interval: `id:N` and `data:{"seq":N,"sent_unix_us":T}` (the wall clock when written, in µs).
// MVC on Tomcat: spring-websocket's handler (Tomcat's JSR-356 container: each message on a Tomcat
// worker thread, platform or virtual; an idle socket holds no thread) and SseEmitter pushed by one
// scheduler thread. WebFlux on Netty: its built-in WebSocketHandler and a Flux of
// ServerSentEvent, on the event loops, each message's steps on the model's CoroutineRunner.
package iolab

import kotlinx.coroutines.reactor.mono
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration
import org.springframework.http.MediaType
import org.springframework.http.codec.ServerSentEvent
import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.RequestParam
import org.springframework.web.bind.annotation.RestController
import org.springframework.web.reactive.HandlerMapping
import org.springframework.web.reactive.config.WebFluxConfigurer
import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping
import org.springframework.web.reactive.socket.server.WebSocketService
import org.springframework.web.reactive.socket.server.support.HandshakeWebSocketService
import org.springframework.web.reactive.socket.server.upgrade.ReactorNettyRequestUpgradeStrategy
import org.springframework.web.reactive.socket.WebSocketMessage
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter
import org.springframework.web.socket.BinaryMessage
import org.springframework.web.socket.CloseStatus
import org.springframework.web.socket.TextMessage
import org.springframework.web.socket.WebSocketSession
import org.springframework.web.socket.config.annotation.EnableWebSocket
import org.springframework.web.socket.config.annotation.WebSocketConfigurer
import org.springframework.web.socket.config.annotation.WebSocketHandlerRegistry
import org.springframework.web.socket.handler.AbstractWebSocketHandler
import org.springframework.web.socket.server.standard.ServletServerContainerFactoryBean
import reactor.core.publisher.Flux
import reactor.core.publisher.Mono
import java.time.Duration
import java.time.Instant
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicLong
import org.springframework.web.reactive.socket.CloseStatus as FluxCloseStatus
import org.springframework.web.reactive.socket.WebSocketHandler as FluxWebSocketHandler

private val HELD_IDLE: Duration = Duration.ofSeconds(60)
private const val HELD_MAX_FRAME = 1 shl 20
private val EVERY_DEFAULT: Duration = Duration.ofSeconds(1)
private val EVERY_MIN: Duration = Duration.ofMillis(1)
private const val STEPS_FAILED = "the message's steps failed"

private val DURATION_PART = Regex("""(\d+(?:\.\d*)?|\.\d+)(us|µs|ms|min|m|s|h)""")
private val DURATION_NANOS = mapOf("us" to 1e3, "µs" to 1e3, "ms" to 1e6, "s" to 1e9, "m" to 60e9, "min" to 60e9, "h" to 3600e9)

/** iolab's durations (`100ms`, `1s`, `1m30s`), as crates/model units.rs reads them; null if not one. */
fun heldDuration(text: String): Duration? {
    var nanos = 0.0
    var at = 0
    while (at < text.length) {
        val m = DURATION_PART.matchAt(text, at) ?: return null
        nanos += m.groupValues[1].toDouble() * DURATION_NANOS.getValue(m.groupValues[2])
        at = m.range.last + 1
    }
    return if (at == 0 || nanos > 7 * 86400e9) null else Duration.ofNanos(nanos.toLong())
}

/** The /events interval of `every=` (default 1 s, at least 1 ms). */
fun eventsEvery(every: String?): Duration =
    maxOf(EVERY_MIN, every?.let(::heldDuration) ?: EVERY_DEFAULT)

/** Event [seq]'s data, stamped now. */
fun eventData(seq: Long): String {
    val now = Instant.now()
    return "{\"seq\":$seq,\"sent_unix_us\":${now.epochSecond * 1_000_000 + now.nano / 1_000}}"
}

/** Spring MVC on Tomcat: `pool` and `virtual`. */
@Configuration(proxyBeanMethods = false)
@EnableWebSocket
@ConditionalOnWebApplication(type = Type.SERVLET)
class MvcHeld(private val settings: Settings) : WebSocketConfigurer {
    private val runner = BlockingRunner(settings.backends, settings.model == JvmModel.VIRTUAL, settings.pinned)

    override fun registerWebSocketHandlers(registry: WebSocketHandlerRegistry) {
        registry.addHandler(Echo(), "/ws")
    }

    /** Tomcat's WebSocket container: frame caps and the idle close. */
    @Bean
    fun webSocketContainer() = ServletServerContainerFactoryBean().apply {
        setMaxTextMessageBufferSize(HELD_MAX_FRAME)
        setMaxBinaryMessageBufferSize(HELD_MAX_FRAME)
        setMaxSessionIdleTimeout(HELD_IDLE.toMillis())
    }

    private inner class Echo : AbstractWebSocketHandler() {
        override fun handleTextMessage(session: WebSocketSession, message: TextMessage) {
            if (steps(session)) session.sendMessage(TextMessage(message.payload))
        }

        override fun handleBinaryMessage(session: WebSocketSession, message: BinaryMessage) {
            if (steps(session)) session.sendMessage(BinaryMessage(message.payload))
        }

        /** The URL's steps on this Tomcat thread; false (and closed 1011) if they failed. */
        private fun steps(session: WebSocketSession): Boolean {
            val query = session.uri?.rawQuery ?: return true
            val ok = Counters.track {
                try {
                    runner.run(settings.backends.plan(stepsParam(query)))
                    true
                } catch (e: WorkError) {
                    false
                }
            }
            if (!ok) session.close(CloseStatus(1011, STEPS_FAILED))
            return ok
        }
    }
}

/** MVC's /events: one scheduler thread pushes every emitter's events at a fixed rate. */
@RestController
@ConditionalOnWebApplication(type = Type.SERVLET)
class MvcEvents {
    private val clock = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon(true).name("iolab-events").factory())

    @GetMapping("/events")
    fun events(@RequestParam(required = false) every: String?): SseEmitter {
        val emitter = SseEmitter(0L) // no timeout: it ends with the client
        val seq = AtomicLong()
        val task = clock.scheduleAtFixedRate({
            val n = seq.incrementAndGet()
            // A client gone throws here, which ends the task.
            emitter.send(SseEmitter.event().id(n.toString()).data(eventData(n), MediaType.TEXT_PLAIN))
        }, 0, eventsEvery(every).toNanos(), TimeUnit.NANOSECONDS)
        emitter.onCompletion { task.cancel(false) }
        emitter.onError { task.cancel(false) }
        // Tomcat times an async request out when its client goes: done, not an error to log.
        emitter.onTimeout { emitter.complete() }
        return emitter
    }
}

/** WebFlux on Netty: `loop-blocking`, `loop-offload`, `loop-async`. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = Type.REACTIVE)
class FluxHeld(private val settings: Settings) : WebFluxConfigurer {
    private val runner = CoroutineRunner(settings.backends, settings.model)

    /** Reactor Netty's upgrade, named: with Tomcat's WebSocket classes on the classpath too (the
     *  MVC models'), WebFlux's classpath probe picks Tomcat's strategy and fails every upgrade. */
    override fun getWebSocketService(): WebSocketService = HandshakeWebSocketService(ReactorNettyRequestUpgradeStrategy())

    @Bean
    fun heldMapping(): HandlerMapping = SimpleUrlHandlerMapping(mapOf("/ws" to FluxWebSocketHandler(::hold)), -1)

    /** One WebSocket: its messages one after the other (concatMap), each after its steps. */
    private fun hold(session: org.springframework.web.reactive.socket.WebSocketSession): Mono<Void> {
        val query = session.handshakeInfo.uri.rawQuery
        val echoes = session.receive()
            .timeout(HELD_IDLE)
            .concatMap { msg ->
                val text = msg.type == WebSocketMessage.Type.TEXT
                val bytes = ByteArray(msg.payload.readableByteCount()).also { msg.payload.read(it) }
                mono {
                    if (query != null && !steps(query)) throw StepsFailed()
                    if (text) session.textMessage(String(bytes, Charsets.UTF_8)) else session.binaryMessage { it.wrap(bytes) }
                }
            }
            .onErrorResume(TimeoutException::class.java) { session.close(FluxCloseStatus.GOING_AWAY).then(Mono.empty()) }
            .onErrorResume(StepsFailed::class.java) { session.close(FluxCloseStatus(1011, STEPS_FAILED)).then(Mono.empty()) }
        return session.send(echoes)
    }

    private class StepsFailed : RuntimeException(STEPS_FAILED, null, false, false)

    private suspend fun steps(query: String): Boolean = Counters.track {
        try {
            runner.request(settings.backends.plan(stepsParam(query)))
            true
        } catch (e: WorkError) {
            false
        }
    }
}

/** WebFlux's /events: a Flux.interval per client, on Reactor's parallel scheduler. */
@RestController
@ConditionalOnWebApplication(type = Type.REACTIVE)
class FluxEvents {
    @GetMapping("/events", produces = [MediaType.TEXT_EVENT_STREAM_VALUE])
    fun events(@RequestParam(required = false) every: String?): Flux<ServerSentEvent<String>> =
        Flux.interval(Duration.ZERO, eventsEvery(every)).map { i ->
            val n = i + 1
            ServerSentEvent.builder(eventData(n)).id(n.toString()).build()
        }
}

/** The decoded `steps=` of a raw query (null when absent or badly escaped: the contract's 400). */
private fun stepsParam(query: String): String? =
    query.split('&').firstOrNull { it.startsWith("steps=") }?.let {
        try {
            java.net.URLDecoder.decode(it.removePrefix("steps="), Charsets.UTF_8)
        } catch (e: IllegalArgumentException) {
            null
        }
    }
