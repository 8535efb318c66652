// `pg:MS`: `SELECT pg_sleep(MS / 1000)` on PostgreSQL, the way a Spring team would call it:
// the blocking models through JDBC and HikariCP (Spring Boot's default pool), `loop-async`
// through R2DBC and r2dbc-pool. Both pools hold `--pg-pool` connections (HikariCP's 10) and
// wait `--pg-wait` for one (HikariCP's 30 s), like the Rust targets' pool: the pool, not
// the model, is what caps concurrent queries.
package iolab

import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import io.r2dbc.pool.ConnectionPool
import io.r2dbc.pool.ConnectionPoolConfiguration
import io.r2dbc.postgresql.PostgresqlConnectionConfiguration
import io.r2dbc.postgresql.PostgresqlConnectionFactory
import io.r2dbc.spi.Connection
import io.r2dbc.spi.R2dbcException
import io.r2dbc.spi.R2dbcNonTransientResourceException
import io.r2dbc.spi.R2dbcTimeoutException
import io.r2dbc.spi.R2dbcTransientResourceException
import kotlinx.coroutines.reactive.awaitFirstOrNull
import reactor.core.publisher.Flux
import reactor.core.publisher.Mono
import java.net.ConnectException
import java.net.URI
import java.net.URLDecoder
import java.sql.SQLException
import java.sql.SQLTransientConnectionException
import java.time.Duration

/** Where PostgreSQL is: the parts of a `postgres://USER[:PASSWORD]@HOST[:PORT][/DB]` URL. */
data class PgUrl(val host: String, val port: Int, val user: String, val password: String?, val database: String) {
    val jdbc: String get() = "jdbc:postgresql://$host:$port/$database"

    companion object {
        private const val FIX = "use postgres://USER@HOST:PORT/DB"

        /** The parts of [url], else a usage error naming `--pg` and the fix. */
        fun parse(url: String): PgUrl {
            if (!url.startsWith("postgres://") && !url.startsWith("postgresql://")) {
                throw UsageError("--pg '$url' is not a PostgreSQL URL: $FIX")
            }
            val uri = runCatching { URI(url) }.getOrNull()
            val host = uri?.host ?: throw UsageError("--pg '$url' is not a valid PostgreSQL URL: $FIX")
            val info = uri.rawUserInfo?.split(':', limit = 2).orEmpty().map { URLDecoder.decode(it, Charsets.UTF_8) }
            val user = info.getOrNull(0)?.takeIf { it.isNotEmpty() } ?: System.getProperty("user.name")
            val db = uri.path.orEmpty().removePrefix("/").ifEmpty { user }
            return PgUrl(host, if (uri.port > 0) uri.port else 5432, user, info.getOrNull(1), db)
        }
    }
}

class PgBackend(private val url: PgUrl, private val poolSize: Int, private val waitMs: Long) {
    private val hikari: HikariDataSource by lazy {
        HikariDataSource(
            HikariConfig().apply {
                poolName = "iolab-pg"
                jdbcUrl = url.jdbc
                username = url.user
                url.password?.let { password = it }
                maximumPoolSize = poolSize
                connectionTimeout = waitMs
                // Start without PostgreSQL: a dead backend is an answer (503), not a crash.
                initializationFailTimeout = -1
                addDataSourceProperty("ApplicationName", "iolab")
                addDataSourceProperty("connectTimeout", CONNECT_TIMEOUT.toSeconds().toString())
            },
        )
    }

    private val r2dbc: ConnectionPool by lazy {
        val config = PostgresqlConnectionConfiguration.builder()
            .host(url.host)
            .port(url.port)
            .username(url.user)
            .database(url.database)
            .applicationName("iolab")
            .connectTimeout(CONNECT_TIMEOUT)
            .apply { url.password?.let { password(it) } }
            .build()
        ConnectionPool(
            ConnectionPoolConfiguration.builder(PostgresqlConnectionFactory(config))
                .initialSize(0)
                .maxSize(poolSize)
                .maxAcquireTime(Duration.ofMillis(waitMs))
                .build(),
        )
    }

    /** One `pg_sleep` on the calling thread, which holds a pooled JDBC connection throughout. */
    fun sleepBlocking(micros: Long) {
        Counters.backendCall(BackendKind.PG)
        try {
            hikari.connection.use { c ->
                c.prepareStatement(SQL_JDBC).use { s ->
                    s.setDouble(1, micros / 1e6)
                    s.executeQuery().close()
                }
            }
        } catch (e: SQLException) {
            throw jdbcError(e)
        }
    }

    /** One `pg_sleep` over R2DBC: the coroutine waits for a connection and the answer, no thread does. */
    suspend fun sleepAsync(micros: Long) {
        Counters.backendCall(BackendKind.PG)
        try {
            Mono.usingWhen(
                r2dbc.create(),
                { c: Connection ->
                    Flux.from(c.createStatement(SQL_R2DBC).bind(0, micros / 1e6).execute())
                        .flatMap { result -> result.map { _, _ -> 1 } }
                        .then()
                },
                { c: Connection -> c.close() },
            ).awaitFirstOrNull()
        } catch (e: java.util.concurrent.CancellationException) {
            throw e
        } catch (e: Exception) {
            throw r2dbcError(e)
        }
    }

    private fun poolTimeout() = WorkError(503, "backend 'pg' pool timeout after $waitMs ms")

    /** HikariCP's timeout is a pool timeout unless its cause says PostgreSQL could not be reached. */
    private fun jdbcError(e: SQLException): WorkError {
        if (e is SQLTransientConnectionException) {
            val cause = e.cause as? SQLException ?: return poolTimeout()
            return if (unavailable(cause.sqlState)) unavailable(cause) else poolTimeout()
        }
        return if (unavailable(e.sqlState)) unavailable(e) else failed(e)
    }

    private fun r2dbcError(e: Exception): WorkError {
        val chain = generateSequence(e as Throwable) { it.cause }.toList()
        return when {
            chain.any { it is R2dbcTimeoutException && it.message.orEmpty().contains("acquisition") } -> poolTimeout()
            chain.any { it is ConnectException || it is R2dbcNonTransientResourceException || it is R2dbcTransientResourceException } ->
                unavailable(e)
            e is R2dbcException && unavailable(e.sqlState) -> unavailable(e)
            else -> failed(e)
        }
    }

    companion object {
        /** The statement of every `pg` step (what `iolab verify` counts in pg_stat_statements). */
        private const val SQL_JDBC = "SELECT pg_sleep(?)"
        private const val SQL_R2DBC = "SELECT pg_sleep($1)"
        private val CONNECT_TIMEOUT: Duration = Duration.ofSeconds(5)

        /** SQLSTATE classes 08 (connection), 53 (resources, e.g. too many connections), 57P (shutdown). */
        private fun unavailable(state: String?) =
            state == null || state.startsWith("08") || state.startsWith("53") || state.startsWith("57P")

        private fun unavailable(e: Throwable) = WorkError(503, "backend 'pg' unavailable: ${causes(e)}")

        private fun failed(e: Throwable) = WorkError(502, "backend 'pg': ${causes(e)}")
    }
}
