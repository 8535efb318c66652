// `mc:KEY`: a memcached get through Spotify's Folsom (Netty, ASCII protocol). Every JVM
// memcached client does its socket IO on its own threads, so "blocking" is the calling
// thread joining the get's future (what spymemcached's `get` does too), and `loop-async`
// awaits it instead. Like the Rust targets, `--mc-pool` connections (default 1, the E4
// set-up) are leased one get at a time, waiting up to 30 s for one.
package iolab

import com.spotify.folsom.ConnectFuture
import com.spotify.folsom.MemcacheClient
import com.spotify.folsom.MemcacheClientBuilder
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.future.await
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import java.util.concurrent.ArrayBlockingQueue
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit

/** One pooled connection: a Folsom client with a single connection, made on first use. */
private class Slot {
    var client: MemcacheClient<ByteArray>? = null
}

class McBackend(private val addr: String, private val poolSize: Int) {
    private val host = addr.substringBeforeLast(':')
    private val port = addr.substringAfterLast(':').toInt()

    /** Leases for the blocking models, first come first served like `loop-async`'s channel
     *  (an unfair queue let threads barge: p50 5 ms, p99 2.3 s at 170 clients on one connection). */
    private val blocking: ArrayBlockingQueue<Slot> by lazy {
        ArrayBlockingQueue<Slot>(poolSize, true).apply { repeat(poolSize) { add(Slot()) } }
    }

    /** Leases for `loop-async`: waiting for one suspends, it holds no thread. */
    private val async: Channel<Slot> by lazy {
        Channel<Slot>(poolSize).apply { repeat(poolSize) { trySend(Slot()) } }
    }

    /** Get [key] on the calling thread, which waits for a connection and for the value. */
    fun getBlocking(key: String): ByteArray {
        Counters.backendCall(BackendKind.MC)
        val slot = blocking.poll(WAIT_MS, TimeUnit.MILLISECONDS) ?: throw poolTimeout()
        try {
            val value = try {
                client(slot).get(key).toCompletableFuture().get(IO_TIMEOUT_MS, TimeUnit.MILLISECONDS)
            } catch (e: ExecutionException) {
                throw unavailable(e.cause ?: e)
            } catch (e: java.util.concurrent.TimeoutException) {
                throw unavailable(e)
            }
            return value ?: throw miss(key)
        } finally {
            blocking.add(slot)
        }
    }

    /** Get [key] without holding a thread while it waits. */
    suspend fun getAsync(key: String): ByteArray {
        Counters.backendCall(BackendKind.MC)
        // Kept outside the timeout block: a timeout may fire just after `receive` returned,
        // and the slot must still go back (kotlinx.coroutines, "Asynchronous timeout and resources").
        var leased: Slot? = null
        withTimeoutOrNull(WAIT_MS) { leased = async.receive() }
        val slot = leased ?: throw poolTimeout()
        try {
            val value = try {
                withTimeout(IO_TIMEOUT_MS) { clientAsync(slot).get(key).await() }
            } catch (e: WorkError) {
                throw e
            } catch (e: TimeoutCancellationException) {
                throw unavailable(java.util.concurrent.TimeoutException("get timed out"))
            } catch (e: java.util.concurrent.CancellationException) {
                throw e
            } catch (e: Exception) {
                throw unavailable(e)
            }
            return value ?: throw miss(key)
        } finally {
            async.trySend(slot)
        }
    }

    /** The slot's client, connected, waiting on this thread; one that cannot connect is shut down. */
    private fun client(slot: Slot): MemcacheClient<ByteArray> = slot.client ?: connect().let { c ->
        try {
            ConnectFuture.connectFuture(c).toCompletableFuture().get(CONNECT_TIMEOUT_MS, TimeUnit.MILLISECONDS)
        } catch (e: Exception) {
            throw cannotConnect(c)
        }
        c.also { slot.client = it }
    }

    /** The slot's client, connected, without holding a thread while it connects. */
    private suspend fun clientAsync(slot: Slot): MemcacheClient<ByteArray> = slot.client ?: connect().let { c ->
        val up = runCatching { withTimeoutOrNull(CONNECT_TIMEOUT_MS) { ConnectFuture.connectFuture(c).await().let { true } } }
        if (up.isFailure && up.exceptionOrNull() is java.util.concurrent.CancellationException) {
            c.shutdown()
            throw up.exceptionOrNull()!!
        }
        if (up.getOrNull() == null) throw cannotConnect(c)
        c.also { slot.client = it }
    }

    private fun connect(): MemcacheClient<ByteArray> = MemcacheClientBuilder.newByteArrayClient()
        .withAddress(host, port)
        .withConnections(1)
        .withRequestTimeoutMillis(IO_TIMEOUT_MS)
        .withConnectionTimeoutMillis(CONNECT_TIMEOUT_MS)
        .withMaxSetLength(MAX_VALUE)
        .connectAscii()

    private fun cannotConnect(c: MemcacheClient<ByteArray>): WorkError {
        c.shutdown()
        return unavailable(java.net.ConnectException("cannot connect within $CONNECT_TIMEOUT_MS ms"))
    }

    private fun poolTimeout() = WorkError(503, "backend 'mc' pool timeout after $WAIT_MS ms")

    private fun unavailable(e: Throwable) = WorkError(503, "backend 'mc' unavailable: $addr: ${causes(e)}")

    private fun miss(key: String) =
        WorkError(502, "backend 'mc': key '$key' not found (store it with `iolab backend mc-fill --key $key`)")

    companion object {
        /** Longest wait for a pooled connection (the Rust targets' `mc_wait`). */
        private const val WAIT_MS = 30_000L
        private const val CONNECT_TIMEOUT_MS = 5_000L

        /** Longest one get may take (a hung server must not hang a target). */
        private const val IO_TIMEOUT_MS = 30_000L

        /** Largest value accepted (the Rust targets' limit). */
        private const val MAX_VALUE = 256 shl 20

        /** A `HOST:PORT` address, else a usage error naming `--mc` and the fix. */
        fun checkAddr(addr: String): String {
            val host = addr.substringBeforeLast(':', "")
            val port = addr.substringAfterLast(':', "").toIntOrNull()
            if (host.isEmpty() || port == null || port !in 1..65535) {
                throw UsageError("--mc '$addr' is not HOST:PORT: use e.g. 127.0.0.1:11211")
            }
            return addr
        }
    }
}
