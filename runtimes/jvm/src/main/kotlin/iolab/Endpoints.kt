// The contract's three paths, once per web stack: /work, /health, /metrics.
package iolab

import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type
import org.springframework.http.MediaType
import org.springframework.http.ResponseEntity
import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.RequestParam
import org.springframework.web.bind.annotation.RestController

private val PROMETHEUS = MediaType.parseMediaType("text/plain; version=0.0.4; charset=utf-8")

private fun json(status: Int, body: String): ResponseEntity<Any> =
    ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON).body(body)

/**
 * One request's answer around the model-specific [body], which runs the parsed steps and
 * hands back the last `mc` value: sent as is (octet-stream) for `body=value`, else the JSON.
 */
private inline fun answer(settings: Settings, steps: String?, bodyKind: String?, body: (Step) -> ByteArray?): ResponseEntity<Any> =
    Counters.track {
        val start = System.nanoTime()
        try {
            val step = settings.backends.plan(steps, bodyKind)
            val value = body(step)
            if (bodyKind == "value" && value != null) {
                ResponseEntity.ok().contentType(MediaType.APPLICATION_OCTET_STREAM).body(value)
            } else {
                json(200, Answers.ok(settings.model, step.leafCount(), System.nanoTime() - start))
            }
        } catch (e: WorkError) {
            json(e.status, Answers.error(e.message!!))
        }
    }

private fun healthAnswer(settings: Settings): ResponseEntity<Any> = json(200, "{\"ok\":true,\"model\":\"${settings.model.label}\"}")

private fun metricsAnswer(): ResponseEntity<Any> = ResponseEntity.ok().contentType(PROMETHEUS).body(Counters.prometheus())

/** Spring MVC on Tomcat: models `pool` and `virtual`. */
@RestController
@ConditionalOnWebApplication(type = Type.SERVLET)
class MvcEndpoints(private val settings: Settings) {
    private val runner = BlockingRunner(settings.backends, settings.model == JvmModel.VIRTUAL, settings.pinned)

    @GetMapping("/work")
    fun work(
        @RequestParam(required = false) steps: String?,
        @RequestParam(required = false) body: String?,
    ): ResponseEntity<Any> = answer(settings, steps, body) { runner.run(it) }

    @GetMapping("/health")
    fun health(): ResponseEntity<Any> = healthAnswer(settings)

    @GetMapping("/metrics")
    fun metrics(): ResponseEntity<Any> = metricsAnswer()
}

/** Spring WebFlux on Netty with coroutines: models `loop-blocking`, `loop-offload`, `loop-async`. */
@RestController
@ConditionalOnWebApplication(type = Type.REACTIVE)
class FluxEndpoints(private val settings: Settings) {
    private val runner = CoroutineRunner(settings.backends, settings.model)

    @GetMapping("/work")
    suspend fun work(
        @RequestParam(required = false) steps: String?,
        @RequestParam(required = false) body: String?,
    ): ResponseEntity<Any> = answer(settings, steps, body) { runner.request(it) }

    @GetMapping("/health")
    suspend fun health(): ResponseEntity<Any> = healthAnswer(settings)

    @GetMapping("/metrics")
    suspend fun metrics(): ResponseEntity<Any> = metricsAnswer()
}
