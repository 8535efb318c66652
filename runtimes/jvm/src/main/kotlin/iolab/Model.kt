// The five JVM models: which web stack serves them and how a handler waits.
package iolab

/** A JVM concurrency model; [servlet] picks Spring MVC on Tomcat, else WebFlux on Netty. */
enum class JvmModel(val label: String, val servlet: Boolean) {
    /** Tomcat's pool of platform threads (200), each blocked in `Thread.sleep`. */
    POOL("pool", true),

    /** Tomcat handlers on virtual threads (`spring.threads.virtual.enabled=true`). */
    VIRTUAL("virtual", true),

    /** `Thread.sleep` inside a `suspend fun`, on the Netty event loop. */
    LOOP_BLOCKING("loop-blocking", false),

    /** `withContext(Dispatchers.IO) { Thread.sleep }`: blocked threads of a pool of 64. */
    LOOP_OFFLOAD("loop-offload", false),

    /** `delay`: a timer, no thread held. */
    LOOP_ASYNC("loop-async", false),
    ;

    companion object {
        val NAMES = entries.joinToString(", ") { it.label }

        /** The model named [label], or null. */
        fun of(label: String): JvmModel? = entries.firstOrNull { it.label == label }
    }
}
