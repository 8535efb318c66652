// A keep-alive connection keeps being read: reactor-netty 1.2 (Boot 3.5) stops reading a
// connection when a request that arrived before the previous one's operations ended is then
// answered synchronously (reactor/reactor-netty#4361); the next request sat unread in the
// socket and timed out. Pipelining makes that order certain: a slow request, then a fast one
// in the same write, then a third request after both answers.
package iolab

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import java.io.InputStream
import java.net.Socket

class KeepAliveTest {
    @ParameterizedTest
    @EnumSource(JvmModel::class)
    fun `a request after a queued fast request is still read`(model: JvmModel) {
        Target("--iolab.model=${model.label}").use { t ->
            val port = t.base.substringAfterLast(':').toInt()
            Socket("127.0.0.1", port).use { s ->
                s.soTimeout = 10_000
                val out = s.getOutputStream()
                val input = s.getInputStream()
                fun get(path: String) = "GET $path HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                repeat(3) { round ->
                    out.write((get("/work?steps=sleep:50") + get("/nope")).toByteArray())
                    out.flush()
                    assertEquals(200, readResponse(input), "${model.label} round $round: slow request")
                    assertEquals(404, readResponse(input), "${model.label} round $round: queued request")
                    out.write(get("/health").toByteArray())
                    out.flush()
                    // Under the bug this read times out: the request stays in the socket.
                    assertEquals(200, readResponse(input), "${model.label} round $round: next request")
                }
            }
        }
    }

    /** Reads one HTTP/1.1 response (Content-Length or chunked) and returns its status. */
    private fun readResponse(input: InputStream): Int {
        fun line(): String {
            val b = StringBuilder()
            while (true) {
                val c = input.read()
                check(c >= 0) { "connection closed" }
                if (c == '\n'.code) return b.toString().trimEnd('\r')
                b.append(c.toChar())
            }
        }
        val status = line().split(' ')[1].toInt()
        var length = -1
        var chunked = false
        while (true) {
            val h = line()
            if (h.isEmpty()) break
            val (name, value) = h.split(':', limit = 2).map { it.trim() }
            if (name.equals("content-length", true)) length = value.toInt()
            if (name.equals("transfer-encoding", true) && value.contains("chunked")) chunked = true
        }
        if (chunked) {
            while (true) {
                val size = line().substringBefore(';').trim().toInt(16)
                input.readNBytes(size)
                line()
                if (size == 0) break
            }
        } else if (length > 0) {
            input.readNBytes(length)
        }
        return status
    }
}
