// `pg:MS` and `mc:KEY` against the real PostgreSQL and memcached of the test command: every
// call reaches the server, the pool caps concurrent calls whatever the model, `par` overlaps
// where the model can, `body=value` answers memcached's bytes as stored, and a missing key,
// a full pool or a dead server is a 502/503 answer, never a crash.
package iolab

import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import java.net.ServerSocket
import kotlin.random.Random

class PgMcBackendTest {
    private fun pgCalls(t: Target) = t.metric("iolab_backend_calls_total{kind=\"pg\"}")

    @ParameterizedTest
    @EnumSource(JvmModel::class)
    fun `pg steps run pg_sleep on PostgreSQL, at most pg-pool at a time`(model: JvmModel) {
        Target("--iolab.model=${model.label}", "--iolab.pg=${Services.pg}", "--iolab.pg-pool=4").use { t ->
            val sleeps = Services.pgSleeps()
            val calls = pgCalls(t) // Counters are per JVM, and tests share one.
            val one = t.get("/work?steps=pg:50")
            assertEquals(200, one.status, one.body)
            assertTrue(one.millis >= 50, "${one.millis} ms")
            assertPar(model, t.get("/work?steps=par(pg:300,pg:300,pg:300)"), serialMs = 880, overlapMs = 850)
            // Eight 300 ms queries on four connections: two waves, whatever the model.
            val burst = t.burst("/work?steps=pg:300", 8)
            assertTrue(burst.all { it.status == 200 }, burst.map { it.body }.toString())
            assertTrue(burst.maxOf { it.millis } >= 580, "${model.label}: slowest ${burst.maxOf { it.millis }} ms with a pool of 4")
            assertEquals(calls + 12, pgCalls(t))
            val ran = Services.pgSleeps() - sleeps
            assertTrue(ran >= 12, "pg_stat_statements counted $ran pg_sleep calls, expected at least 12")
        }
    }

    @Test
    fun `a full pg pool is a 503 pool timeout and a dead PostgreSQL a 503`() {
        val dead = ServerSocket(0).use { it.localPort }
        for (model in listOf("pool", "loop-async")) {
            Target("--iolab.model=$model", "--iolab.pg=${Services.pg}", "--iolab.pg-pool=1", "--iolab.pg-wait=300").use { t ->
                val answers = t.burst("/work?steps=pg:1500", 2)
                assertEquals(listOf(200, 503), answers.map { it.status }.sorted(), answers.map { it.body }.toString())
                val late = answers.first { it.status == 503 }
                assertEquals("{\"ok\":false,\"error\":\"backend 'pg' pool timeout after 300 ms\"}", late.body)
            }
            Target("--iolab.model=$model", "--iolab.pg=postgres://postgres@127.0.0.1:$dead/postgres", "--iolab.pg-wait=2000").use { t ->
                val a = t.get("/work?steps=pg:10")
                assertEquals(503, a.status, a.body)
                assertTrue(a.body.startsWith("{\"ok\":false,\"error\":\"backend 'pg' unavailable: "), a.body)
            }
        }
    }

    @ParameterizedTest
    @EnumSource(JvmModel::class)
    fun `mc steps get memcached's bytes, and body=value answers them as stored`(model: JvmModel) {
        val key = "iolab-jvm-test-${model.label}-${Random.nextInt(1_000_000)}"
        val value = Random.nextBytes(1_024_000)
        Services.mcSet(key, value)
        Target("--iolab.model=${model.label}", "--iolab.mc=${Services.mc}").use { t ->
            val calls = t.metric("iolab_backend_calls_total{kind=\"mc\"}")
            val json = t.get("/work?steps=mc:$key")
            assertEquals(200, json.status, json.body)
            assertTrue(json.body.startsWith("{\"ok\":true,\"model\":\"${model.label}\",\"steps\":1,"), json.body)
            val (status, type, bytes) = t.getBytes("/work?steps=seq(sleep:1,mc:$key,cpu:10)&body=value")
            assertEquals(200, status)
            assertEquals("application/octet-stream", type)
            assertArrayEquals(value, bytes)
            val miss = t.get("/work?steps=mc:$key-absent&body=value")
            assertEquals(502, miss.status, miss.body)
            assertTrue(miss.body.contains("key '$key-absent' not found"), miss.body)
            // One connection (the default): twenty gets queue on it, and all arrive.
            val burst = t.burst("/work?steps=mc:$key", 20)
            assertTrue(burst.all { it.status == 200 }, burst.map { it.body }.toString())
            assertEquals(calls + 23, t.metric("iolab_backend_calls_total{kind=\"mc\"}"))
        }
    }

    @Test
    fun `a dead memcached is a 503`() {
        val dead = ServerSocket(0).use { it.localPort }
        for (model in listOf("pool", "loop-async")) {
            Target("--iolab.model=$model", "--iolab.mc=127.0.0.1:$dead").use { t ->
                val a = t.get("/work?steps=mc:test")
                assertEquals(503, a.status, a.body)
                assertTrue(a.body.startsWith("{\"ok\":false,\"error\":\"backend 'mc' unavailable: 127.0.0.1:$dead: "), a.body)
            }
        }
    }

    @Test
    fun `bad backend options are one-line usage errors`() {
        for ((option, message) in listOf(
            "--iolab.pg=mysql://x" to "--pg 'mysql://x' is not a PostgreSQL URL",
            "--iolab.mc=localhost" to "--mc 'localhost' is not HOST:PORT",
            "--iolab.pg-pool=0" to "--pg-pool must be a whole number >= 1",
            "--iolab.pg-wait=30s" to "--pg-wait must be a whole number of milliseconds",
        )) {
            val e = runCatching { Settings.fromArgs(arrayOf("--iolab.model=pool", option)) }.exceptionOrNull()
            assertTrue(e is UsageError && e.message!!.startsWith(message), "$option: $e")
        }
    }
}
