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
    /** Run [step]; the value of its last `mc` get in written order (for `body=value`), or null. */
    fun run(step: Step): ByteArray? = when (step) {
        is Step.Cpu -> {
            leibniz(step.terms)
            null
        }
        is Step.Io -> io(step)
        is Step.Seq -> step.children.fold(null as ByteArray?) { last, c -> run(c) ?: last }
        is Step.Par -> fanOut(step.children)
    }

    private fun io(step: Step.Io): ByteArray? = when (step.kind) {
        BackendKind.SLEEP -> {
            sleep(step.micros)
            null
        }
        BackendKind.HTTP -> {
            backends.http!!.callBlocking(step.micros)
            null
        }
        BackendKind.PG -> {
            backends.pg!!.sleepBlocking(step.micros)
            null
        }
        BackendKind.MC -> backends.mc!!.getBlocking(step.key)
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

    /** Every child runs (the first on this thread); the first error in written order wins. */
    private fun fanOut(children: List<Step>): ByteArray? {
        val builder = if (virtual) Thread.ofVirtual() else Thread.ofPlatform().daemon(true)
        val results = arrayOfNulls<Result<ByteArray?>>(children.size)
        val threads = children.withIndex().drop(1).map { (i, child) ->
            builder.start { results[i] = runCatching { run(child) } }
        }
        results[0] = runCatching { run(children[0]) }
        threads.forEach(Thread::join)
        return results.fold(null as ByteArray?) { last, r -> r!!.getOrThrow() ?: last }
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
    suspend fun request(step: Step): ByteArray? =
        if (model == JvmModel.LOOP_ASYNC) withContext(timers) { run(step) } else run(step)

    /** Run [step]; the value of its last `mc` get in written order (for `body=value`), or null. */
    suspend fun run(step: Step): ByteArray? = when (step) {
        is Step.Cpu -> {
            leibniz(step.terms)
            null
        }
        is Step.Io -> io(step)
        is Step.Seq -> step.children.fold(null as ByteArray?) { last, c -> run(c) ?: last }
        is Step.Par -> coroutineScope { step.children.map { async { run(it) } }.awaitAll() }
            .fold(null as ByteArray?) { last, v -> v ?: last }
    }

    private suspend fun io(step: Step.Io): ByteArray? = when (step.kind) {
        BackendKind.SLEEP -> {
            wait(step.micros)
            null
        }
        BackendKind.HTTP -> {
            http(step.micros)
            null
        }
        BackendKind.PG -> {
            pg(step.micros)
            null
        }
        BackendKind.MC -> mc(step.key)
    }

    /** The model's way to make a blocking call: on the loop thread, offloaded, or not at all. */
    private suspend fun <T> blocking(call: () -> T, async: suspend () -> T): T = when (model) {
        JvmModel.LOOP_BLOCKING -> call()
        JvmModel.LOOP_OFFLOAD -> withContext(Dispatchers.IO) { call() }
        else -> async()
    }

    /** JDBC + HikariCP where the model blocks, R2DBC for `loop-async`. */
    private suspend fun pg(micros: Long) {
        val pg = backends.pg!!
        blocking({ pg.sleepBlocking(micros) }, { pg.sleepAsync(micros) })
    }

    /** A joined get where the model blocks, an awaited one for `loop-async`. */
    private suspend fun mc(key: String): ByteArray {
        val mc = backends.mc!!
        return blocking({ mc.getBlocking(key) }, { mc.getAsync(key) })
    }

    /** RestClient where the model blocks (on the loop, or offloaded), WebClient for `loop-async`. */
    private suspend fun http(micros: Long) {
        val http = backends.http!!
        blocking({ http.callBlocking(micros) }, { http.callAsync(micros) })
    }

    private suspend fun wait(micros: Long) {
        Counters.backendCall(BackendKind.SLEEP)
        blocking({ Thread.sleep(Duration.ofNanos(micros * 1000)) }, { delay(micros.microseconds) })
    }
}
