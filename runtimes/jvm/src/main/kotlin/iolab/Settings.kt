// Start-up options: `--iolab.NAME=VALUE` arguments (runtimes/jvm/start writes them from its
// flags), validated into one typed value before Spring starts, and mapped onto the knobs of
// the real systems (Tomcat, Reactor Netty, kotlinx.coroutines).
package iolab

import org.springframework.core.env.SimpleCommandLinePropertySource

/** A bad start-up option: one line naming the fault and the fix (exit code 2). */
class UsageError(message: String) : Exception(message)

data class Settings(
    val model: JvmModel,
    /** `pool`: Tomcat maxThreads (200). */
    val threads: Int? = null,
    /** `pool`, `virtual`: Tomcat acceptCount, the listen backlog (100). */
    val backlog: Int? = null,
    /** `pool`, `virtual`: Tomcat maxConnections (8,192). */
    val maxConnections: Int? = null,
    /** `loop-*`: Netty event-loop threads (Reactor's default max(cores, 4)). */
    val workers: Int? = null,
    /** `loop-offload`: Dispatchers.IO threads (64). */
    val offload: Int? = null,
    /** `pool`, `virtual`: every blocking sleep inside a `synchronized` block (Loom pinning). */
    val pinned: Boolean = false,
    /** Base URL of iolab's HTTP delay service for `http:MS` steps (none: such steps are refused). */
    val httpBackend: String? = null,
    /** Requests the target sends itself before it prints its URL (JIT warm-up, see Warmup.kt). */
    val warmup: Int = 0,
    /** `/metrics` also on this port, from a thread of its own (0: a free one). */
    val metricsPort: Int? = null,
    /** PostgreSQL for `pg:MS` steps (none: such steps are refused). */
    val pg: PgUrl? = null,
    /** PostgreSQL connections in the pool (HikariCP's default). */
    val pgPool: Int = 10,
    /** Longest wait for a pooled PostgreSQL connection, in ms (HikariCP's default). */
    val pgWaitMs: Long = 30_000,
    /** memcached `HOST:PORT` for `mc:KEY` steps (none: such steps are refused). */
    val mc: String? = null,
    /** memcached connections (1: the E4 set-up). */
    val mcPool: Int = 1,
) {
    /** The backends this target can call. */
    val backends: Backends by lazy {
        Backends(
            http = httpBackend?.let(::HttpBackend),
            pg = pg?.let { PgBackend(it, pgPool, pgWaitMs) },
            mc = mc?.let { McBackend(it, mcPool) },
        )
    }

    /** Spring properties that carry these settings (Tomcat knobs, virtual threads). */
    fun springProperties(): Map<String, Any> {
        val p = mutableMapOf<String, Any>(
            "server.address" to "127.0.0.1",
            "spring.main.banner-mode" to "off",
            "spring.jmx.enabled" to "false",
            "server.shutdown" to "immediate",
        )
        if (model.servlet) {
            p["server.tomcat.threads.max"] = threads ?: 200
            p["server.tomcat.accept-count"] = backlog ?: 100
            p["server.tomcat.max-connections"] = maxConnections ?: 8192
            p["spring.threads.virtual.enabled"] = model == JvmModel.VIRTUAL
        }
        return p
    }

    /** JVM-wide knobs that are read once, from system properties, before first use. */
    fun applySystemProperties() {
        workers?.let { System.setProperty("reactor.netty.ioWorkerCount", it.toString()) }
        offload?.let { System.setProperty("kotlinx.coroutines.io.parallelism", it.toString()) }
    }

    companion object {
        /** Most warm-up requests: bounded, like every load loop. */
        const val MAX_WARMUP = 100_000

        private val OPTIONS = listOf(
            "model", "threads", "backlog", "max-connections", "workers", "offload", "synchronized", "http-backend", "warmup",
            "metrics-port",
            "pg", "pg-pool", "pg-wait", "mc", "mc-pool",
        )

        /** Options for embedding (tests), not shown in messages. */
        private val INTERNAL = listOf("print-url")

        /** Which models each knob applies to; a knob given to another model is an error. */
        private val APPLIES = mapOf(
            "threads" to setOf(JvmModel.POOL),
            "backlog" to setOf(JvmModel.POOL, JvmModel.VIRTUAL),
            "max-connections" to setOf(JvmModel.POOL, JvmModel.VIRTUAL),
            "workers" to setOf(JvmModel.LOOP_BLOCKING, JvmModel.LOOP_OFFLOAD, JvmModel.LOOP_ASYNC),
            "offload" to setOf(JvmModel.LOOP_OFFLOAD),
            "synchronized" to setOf(JvmModel.POOL, JvmModel.VIRTUAL),
        )

        fun fromArgs(args: Array<String>): Settings {
            val src = SimpleCommandLinePropertySource(*args)
            for (name in src.propertyNames) {
                if (name.startsWith("iolab.") && name.removePrefix("iolab.").let { it !in OPTIONS && it !in INTERNAL }) {
                    throw UsageError(
                        "unknown option --${name.removePrefix("iolab.")} (expected one of: " +
                            OPTIONS.joinToString(", ") { "--$it" } + ")",
                    )
                }
            }
            val label = src.getProperty("iolab.model")
                ?: throw UsageError("missing --model (expected one of: ${JvmModel.NAMES})")
            val model = JvmModel.of(label)
                ?: throw UsageError("unknown model '$label' (expected one of: ${JvmModel.NAMES})")
            for ((knob, models) in APPLIES) {
                if (src.containsProperty("iolab.$knob") && model !in models) {
                    throw UsageError(
                        "--$knob does not apply to model '${model.label}' (it applies to: " +
                            models.joinToString(", ") { it.label } + ")",
                    )
                }
            }
            fun count(knob: String, min: Int, unit: String = ""): Int? {
                val text = src.getProperty("iolab.$knob") ?: return null
                val n = text.toIntOrNull()
                if (n == null || n < min) throw UsageError("--$knob must be a whole number$unit >= $min, got '$text'")
                return n
            }
            val pinned = when (val text = src.getProperty("iolab.synchronized")) {
                null -> false
                "", "true" -> true
                "false" -> false
                else -> throw UsageError("--synchronized takes no value (or true/false), got '$text'")
            }
            return Settings(
                model = model,
                threads = count("threads", 1),
                backlog = count("backlog", 1),
                maxConnections = count("max-connections", 1),
                workers = count("workers", 1),
                offload = count("offload", 1),
                pinned = pinned,
                httpBackend = src.getProperty("iolab.http-backend")?.let(HttpBackend::checkUrl),
                warmup = count("warmup", 0)?.also {
                    if (it > MAX_WARMUP) throw UsageError("--warmup must be at most $MAX_WARMUP requests, got $it")
                } ?: 0,
                metricsPort = count("metrics-port", 0)?.also {
                    if (it > 65_535) throw UsageError("--metrics-port must be 0..65535, got $it")
                },
                pg = src.getProperty("iolab.pg")?.let(PgUrl::parse),
                pgPool = count("pg-pool", 1) ?: 10,
                pgWaitMs = count("pg-wait", 1, " of milliseconds")?.toLong() ?: 30_000,
                mc = src.getProperty("iolab.mc")?.let(McBackend::checkAddr),
                mcPool = count("mc-pool", 1) ?: 1,
            )
        }
    }
}
