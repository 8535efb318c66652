// The real PostgreSQL and memcached that `scripts/services up` starts for the test command
// (IOLAB_PG, IOLAB_MC). Without them the backend tests are skipped, unless
// IOLAB_REQUIRE_BACKENDS=1 (runtimes/jvm/test sets it) makes a missing one a failure.
package iolab

import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Assumptions.assumeTrue
import java.io.BufferedInputStream
import java.net.Socket
import java.sql.DriverManager

object Services {
    val pg: String get() = need("IOLAB_PG")
    val mc: String get() = need("IOLAB_MC")

    /** True when both are there (the contract test then expects their real answers). */
    val present: Boolean get() = listOf("IOLAB_PG", "IOLAB_MC").all { !System.getenv(it).isNullOrEmpty() }

    private fun need(name: String): String {
        val v = System.getenv(name)
        if (v.isNullOrEmpty()) {
            if (System.getenv("IOLAB_REQUIRE_BACKENDS") == "1") {
                fail<Unit>("$name is not set: run scripts/test, whose scripts/services starts PostgreSQL and memcached")
            }
            assumeTrue(false, "$name is not set: start the backends with `eval \"\$(scripts/services up)\"`")
        }
        return v
    }

    /** How many `pg_sleep` statements PostgreSQL has run (pg_stat_statements, as `iolab verify` reads it). */
    fun pgSleeps(): Long {
        val u = PgUrl.parse(pg)
        DriverManager.getConnection(u.jdbc, u.user, u.password).use { c ->
            c.createStatement().use { s ->
                s.executeQuery(
                    "SELECT coalesce(sum(calls), 0)::int8 FROM pg_stat_statements WHERE query ILIKE 'select pg_sleep(%'",
                ).use { r ->
                    r.next()
                    return r.getLong(1)
                }
            }
        }
    }

    /** Store [value] under [key] in memcached over a plain socket (ASCII `set`). */
    fun mcSet(key: String, value: ByteArray) {
        val (host, port) = mc.substringBeforeLast(':') to mc.substringAfterLast(':').toInt()
        Socket(host, port).use { s ->
            s.getOutputStream().apply {
                write("set $key 0 0 ${value.size}\r\n".toByteArray())
                write(value)
                write("\r\n".toByteArray())
                flush()
            }
            val line = BufferedInputStream(s.getInputStream()).readNBytes(8).toString(Charsets.US_ASCII)
            check(line == "STORED\r\n") { "memcached refused the value: $line" }
        }
    }
}
