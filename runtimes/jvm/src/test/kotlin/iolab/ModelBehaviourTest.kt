// Each model waits the way it claims to: checked by what must be true of the answers
// (lower bounds from queueing, thread counts), with 2x margins, never by speed.
package iolab

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

class ModelBehaviourTest {
    @Test
    fun `a full pool queues requests for a thread`() {
        Target("--iolab.model=pool", "--iolab.threads=2").use { t ->
            val answers = t.burst("/work?steps=sleep:300", 4)
            assertTrue(answers.all { it.status == 200 })
            // Two threads, four 300 ms requests: the last two wait for a thread.
            assertTrue(answers.maxOf { it.millis } >= 550, "slowest ${answers.maxOf { it.millis }} ms")
        }
    }

    @Test
    fun `pool holds one platform thread per sleeping request, virtual does not`() {
        /** Platform threads added while 100 requests sleep at once. */
        fun threadsAdded(model: String): Double = Target("--iolab.model=$model").use { t ->
            t.burst("/work?steps=sleep:1", 4)
            val before = t.metric("iolab_threads")
            val load = Thread.ofPlatform().start { t.burst("/work?steps=sleep:2000", 100) }
            Thread.sleep(1200)
            val inFlight = t.metric("iolab_requests_in_flight")
            val threads = t.metric("iolab_threads")
            load.join()
            assertTrue(inFlight >= 50, "$model: $inFlight in flight")
            threads - before
        }
        val virtual = threadsAdded("virtual")
        val pool = threadsAdded("pool")
        assertTrue(pool >= 50, "pool: $pool threads added for 100 sleeping requests")
        assertTrue(virtual < 25, "virtual: $virtual platform threads added for 100 sleeping requests")
    }

    @Test
    fun `synchronized around a sleep no longer pins a carrier on JDK 25`() {
        Target("--iolab.model=virtual", "--iolab.synchronized").use { t ->
            // 40 x 300 ms on 2 carriers would take 6 s if each sleep pinned its carrier.
            val answers = t.burst("/work?steps=sleep:300", 40)
            assertTrue(answers.all { it.status == 200 })
            assertTrue(answers.maxOf { it.millis } < 3000, "slowest ${answers.maxOf { it.millis }} ms")
        }
    }

    @Test
    fun `par overlaps except when the event loop itself sleeps`() {
        val path = "/work?steps=par(sleep:200,sleep:200,sleep:200)"
        for (model in JvmModel.entries) {
            Target("--iolab.model=${model.label}").use { t ->
                t.get(path) // warm up
                assertPar(model, t.get(path), serialMs = 580, overlapMs = 500)
            }
        }
    }

    @Test
    fun `metrics count requests and backend calls`() {
        Target("--iolab.model=loop-async").use { t ->
            val sleeps = t.metric("iolab_backend_calls_total{kind=\"sleep\"}")
            val done = t.metric("iolab_requests_completed_total")
            assertEquals(200, t.get("/work?steps=seq(sleep:1,sleep:1,par(sleep:1,sleep:1,cpu:10))").status)
            assertEquals(400, t.get("/work?steps=pg:1").status)
            val http = t.get("/work?steps=seq(sleep:1,http:1)")
            assertEquals(400, http.status)
            assertTrue(http.body.contains("backend 'http' not configured: start the target with --http-backend URL"), http.body)
            // Refused workloads do none of their work: only the 4 sleeps of the first request ran.
            assertEquals(sleeps + 4, t.metric("iolab_backend_calls_total{kind=\"sleep\"}"))
            assertEquals(done + 3, t.metric("iolab_requests_completed_total"))
            assertEquals(0.0, t.metric("iolab_requests_in_flight"))
        }
    }

    @Test
    fun `a warmed-up target starts with zeroed counters`() {
        for (model in listOf("pool", "loop-async")) {
            Target("--iolab.model=$model", "--iolab.warmup=200").use { t ->
                // The 200 warm-up requests ran (each a sleep) and were then forgotten.
                assertEquals(0.0, t.metric("iolab_requests_completed_total"), model)
                assertEquals(0.0, t.metric("iolab_backend_calls_total{kind=\"sleep\"}"), model)
                assertEquals(200, t.get("/work?steps=sleep:1").status)
                assertEquals(1.0, t.metric("iolab_requests_completed_total"), model)
            }
        }
    }

    @Test
    fun `bad options are one-line usage errors`() {
        fun fault(vararg args: String) = assertThrows<UsageError> { Settings.fromArgs(arrayOf(*args)) }.message!!
        assertEquals("missing --model (expected one of: pool, virtual, loop-blocking, loop-offload, loop-async)", fault())
        assertTrue(fault("--iolab.model=fibers").startsWith("unknown model 'fibers'"))
        assertEquals(
            "--threads does not apply to model 'loop-async' (it applies to: pool)",
            fault("--iolab.model=loop-async", "--iolab.threads=8"),
        )
        assertEquals("--threads must be a whole number >= 1, got 'many'", fault("--iolab.model=pool", "--iolab.threads=many"))
        assertTrue(fault("--iolab.model=pool", "--iolab.redis=x").startsWith("unknown option --redis"))
        assertTrue(fault("--iolab.model=pool", "--iolab.pg=x").startsWith("--pg 'x' is not a PostgreSQL URL"))
        assertEquals(8, Settings.fromArgs(arrayOf("--iolab.model=pool", "--iolab.threads=8")).threads)
        assertTrue(fault("--iolab.model=pool", "--iolab.http-backend=https://x").contains("is not an http:// URL"))
        assertEquals("--warmup must be at most 100000 requests, got 100001", fault("--iolab.model=pool", "--iolab.warmup=100001"))
        assertEquals("--warmup must be a whole number >= 0, got '-1'", fault("--iolab.model=pool", "--iolab.warmup=-1"))
    }
}
