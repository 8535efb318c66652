// `http:MS` steps through RestClient (blocking models) and WebClient (loop-async) against a
// real delay service on loopback: every call reaches it and is counted, `par` overlaps where
// the model can, and a dead or failing backend is a 503 or 502 answer, never a crash.
package iolab

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import java.net.ServerSocket

class HttpBackendTest {
    @ParameterizedTest
    @EnumSource(JvmModel::class)
    fun `every http step reaches the delay service`(model: JvmModel) {
        DelayService().use { delay ->
            Target("--iolab.model=${model.label}", "--iolab.http-backend=${delay.url}").use { t ->
                val calls = t.metric("iolab_backend_calls_total{kind=\"http\"}")
                val one = t.get("/work?steps=http:50")
                assertEquals(200, one.status, one.body)
                assertTrue(one.millis >= 50, "${one.millis} ms")
                assertPar(model, t.get("/work?steps=par(http:200,http:200,http:200)"), serialMs = 580, overlapMs = 550)
                val burst = t.burst("/work?steps=http:100", 20)
                assertTrue(burst.all { it.status == 200 }, burst.map { it.body }.toString())
                assertEquals(24, delay.hits.get())
                assertEquals(calls + 24, t.metric("iolab_backend_calls_total{kind=\"http\"}"))
            }
        }
    }

    @Test
    fun `a dead backend is a 503 and a failing one a 502`() {
        val port = ServerSocket(0).use { it.localPort }
        for (model in listOf("pool", "loop-async")) {
            Target("--iolab.model=$model", "--iolab.http-backend=http://127.0.0.1:$port").use { t ->
                val a = t.get("/work?steps=http:10")
                assertEquals(503, a.status, a.body)
                assertTrue(a.body.startsWith("{\"ok\":false,\"error\":\"backend 'http' unavailable: "), a.body)
            }
            DelayService().use { delay ->
                Target("--iolab.model=$model", "--iolab.http-backend=${delay.url}/broken").use { t ->
                    val a = t.get("/work?steps=http:10")
                    assertEquals(502, a.status, a.body)
                    assertEquals("{\"ok\":false,\"error\":\"backend 'http': delay service answered 500\"}", a.body)
                }
            }
        }
    }
}
