// How a parsed workload runs under each model: blocking on the request's own thread
// (MVC, pool or virtual) or inside a coroutine (WebFlux), with the model's way of waiting.
package iolab

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.withContext
import java.time.Duration
import java.util.concurrent.Executors
import kotlin.time.Duration.Companion.microseconds

/**
 * MVC: the handler thread does the work and blocks in `Thread.sleep`. `par` children run on
 * threads of the model's own kind (platform for `pool`, virtual for `virtual`), one per extra
 * child, and the handler joins them: that is what a servlet fanning out by hand costs.
 * With [pinned], every sleep sits inside a `synchronized` block, the classic Loom pinning case.
 */
class BlockingRunner(private val backends: Backends, private val virtual: Boolean, private val pinned: Boolean) {
    fun run(step: Step) {
        when (step) {
            is Step.Cpu -> leibniz(step.terms)
            is Step.Io -> if (step.kind == BackendKind.HTTP) backends.http!!.callBlocking(step.micros) else sleep(step.micros)
            is Step.Seq -> step.children.forEach(::run)
            is Step.Par -> fanOut(step.children)
        }
    }

    private fun sleep(micros: Long) {
        Counters.backendCall(BackendKind.SLEEP)
        val d = Duration.ofNanos(micros * 1000)
        if (pinned) {
            val monitor = Any()
            synchronized(monitor) { Thread.sleep(d) }
        } else {
            Thread.sleep(d)
        }
    }

    private fun fanOut(children: List<Step>) {
        val builder = if (virtual) Thread.ofVirtual() else Thread.ofPlatform().daemon(true)
        val lock = Any()
        var failure: Throwable? = null
        val threads = children.drop(1).map { child ->
            builder.start {
                try {
                    run(child)
                } catch (e: Throwable) {
                    synchronized(lock) { failure = failure ?: e }
                }
            }
        }
        run(children[0])
        threads.forEach(Thread::join)
        failure?.let { throw it }
    }
}

/**
 * WebFlux: the handler is a `suspend fun` that Spring starts on the Netty event loop. The
 * model decides how it waits, exactly as the E2 article's endpoints did; `par` children are
 * `async` siblings, so they overlap only where the waiting style lets them.
 */
class CoroutineRunner(private val backends: Backends, private val model: JvmModel) {
    private val timers by lazy {
        val cores = Runtime.getRuntime().availableProcessors()
        val factory = Thread.ofPlatform().daemon(true).name("iolab-timer-", 0).factory()
        Executors.newScheduledThreadPool(cores, factory).asCoroutineDispatcher()
    }

    /**
     * One request. Spring starts `suspend` handlers `Unconfined`, so a `delay` is timed by
     * kotlinx's single DefaultExecutor thread, which also runs the rest of the handler
     * (Kotlin/kotlinx.coroutines#4262); in our tests a `loop-async` request now and then never
     * woke up from it after the JVM had been idle. So `loop-async` runs its steps on a
     * scheduled pool of `cores` threads that times its own `delay`s: still no thread is held
     * while a request waits.
     */
    suspend fun request(step: Step) {
        if (model == JvmModel.LOOP_ASYNC) withContext(timers) { run(step) } else run(step)
    }

    suspend fun run(step: Step) {
        when (step) {
            is Step.Cpu -> leibniz(step.terms)
            is Step.Io -> if (step.kind == BackendKind.HTTP) http(step.micros) else wait(step.micros)
            is Step.Seq -> for (c in step.children) run(c)
            is Step.Par -> coroutineScope { step.children.map { async { run(it) } }.awaitAll() }
        }
    }

    /** RestClient where the model blocks (on the loop, or offloaded), WebClient for `loop-async`. */
    private suspend fun http(micros: Long) {
        val http = backends.http!!
        when (model) {
            JvmModel.LOOP_BLOCKING -> http.callBlocking(micros)
            JvmModel.LOOP_OFFLOAD -> withContext(Dispatchers.IO) { http.callBlocking(micros) }
            else -> http.callAsync(micros)
        }
    }

    private suspend fun wait(micros: Long) {
        Counters.backendCall(BackendKind.SLEEP)
        when (model) {
            JvmModel.LOOP_BLOCKING -> Thread.sleep(Duration.ofNanos(micros * 1000))
            JvmModel.LOOP_OFFLOAD -> withContext(Dispatchers.IO) { Thread.sleep(Duration.ofNanos(micros * 1000)) }
            else -> delay(micros.microseconds)
        }
    }
}
