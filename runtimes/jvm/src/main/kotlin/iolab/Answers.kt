// The contract's JSON bodies, written by hand so field order and wording match the
// Rust targets byte for byte: `{"ok":true,"model":"pool","steps":3,"elapsed_ms":12.3}`
// and `{"ok":false,"error":"..."}`.
package iolab

import java.util.Locale

/** A request the target refuses, with the status and message it answers. */
class WorkError(val status: Int, message: String) : Exception(message)

/** Every distinct message down [e]'s cause chain, joined by ": " (its class name if none): what a
 *  backend error tells the client about why a client library failed. */
fun causes(e: Throwable): String =
    generateSequence(e) { it.cause }.mapNotNull { it.message }.distinct().joinToString(": ").ifEmpty { e.javaClass.simpleName }

object Answers {
    const val MISSING_STEPS = "missing query parameter 'steps', e.g. /work?steps=sleep:100"
    const val VALUE_NEEDS_MC =
        "body=value answers the value of the last mc step, but steps has none: e.g. /work?steps=mc:test&body=value"

    fun ok(model: JvmModel, steps: Int, elapsedNanos: Long): String {
        val ms = String.format(Locale.ROOT, "%.3f", elapsedNanos / 1e6)
        return "{\"ok\":true,\"model\":\"${model.label}\",\"steps\":$steps,\"elapsed_ms\":$ms}"
    }

    fun error(message: String): String = "{\"ok\":false,\"error\":${quote(message)}}"

    /** A JSON string literal (RFC 8259 escapes). */
    fun quote(s: String): String {
        val b = StringBuilder(s.length + 2).append('"')
        for (c in s) {
            when {
                c == '"' -> b.append("\\\"")
                c == '\\' -> b.append("\\\\")
                c == '\n' -> b.append("\\n")
                c == '\r' -> b.append("\\r")
                c == '\t' -> b.append("\\t")
                c < ' ' -> b.append(String.format(Locale.ROOT, "\\u%04x", c.code))
                else -> b.append(c)
            }
        }
        return b.append('"').toString()
    }
}
