// The workload language, ported byte for byte from crates/model/src/steps/parse.rs.
//
//     steps := item (',' item)*            a top-level list runs in sequence
//     item  := seq(steps) | par(steps) | leaf
//     leaf  := cpu:N | sleep:MS | http:MS | pg:MS | mc:KEY
//
// Positions in errors are UTF-8 byte offsets, as in Rust, so the parser works on
// the input's UTF-8 bytes. vectors/steps.json pins every message.
package iolab

import java.nio.charset.StandardCharsets

/** The backends an IO step can go to; [label] is the metric label and step word. */
enum class BackendKind(val label: String) {
    SLEEP("sleep"),
    HTTP("http"),
    PG("pg"),
    MC("mc"),
}

/** Every word that starts a step, as the unknown-step message lists them (from [BackendKind]). */
private val STEP_WORDS: String =
    (listOf("cpu") + BackendKind.entries.map { it.label } + "seq").joinToString(", ") + " or par"

/** One step of a workload. */
sealed interface Step {
    /** `cpu:N`: N terms of the Leibniz series on the calling thread. */
    data class Cpu(val terms: Long) : Step

    /** One backend call; timed calls keep whole microseconds, as in Rust. */
    data class Io(val kind: BackendKind, val micros: Long = 0, val key: String = "") : Step

    /** Children one after another. */
    data class Seq(val children: List<Step>) : Step

    /** Children at the same time, in whatever way the model can. */
    data class Par(val children: List<Step>) : Step

    /** Number of leaf steps: the contract's `"steps"` field. */
    fun leafCount(): Int = when (this) {
        is Cpu, is Io -> 1
        is Seq -> children.sumOf { it.leafCount() }
        is Par -> children.sumOf { it.leafCount() }
    }

    /** Every backend the workload calls, so a request fails before doing any work. */
    fun backends(): Set<BackendKind> = when (this) {
        is Cpu -> emptySet()
        is Io -> setOf(kind)
        is Seq -> children.flatMapTo(HashSet()) { it.backends() }
        is Par -> children.flatMapTo(HashSet()) { it.backends() }
    }

    /** The canonical text: `parse(step.canonical()) == step`. */
    fun canonical(): String = when (this) {
        is Cpu -> "cpu:$terms"
        is Io -> if (kind == BackendKind.MC) "mc:$key" else "${kind.label}:${millisText(micros)}"
        is Seq -> children.joinToString(",", "seq(", ")") { it.canonical() }
        is Par -> children.joinToString(",", "par(", ")") { it.canonical() }
    }
}

/** Limits that keep one request's work bounded whatever a client sends. */
object Limits {
    const val MAX_DEPTH = 16
    const val MAX_LEAVES = 1_000
    const val MAX_MS = 3_600_000.0
    const val MAX_MS_TEXT = "3600000"
    const val MAX_CPU_TERMS = 100_000_000_000L
    const val MAX_KEY_LEN = 250
    const val MAX_INPUT_LEN = 16_384
}

/** A fault in a steps string, with the byte offset where it was found. */
class StepsError(val detail: String, val position: Int) : Exception("steps: $detail at $position")

/** Milliseconds as text: whole numbers bare, fractions with up to 3 decimals. */
fun millisText(micros: Long): String {
    val ms = micros / 1000
    val frac = micros % 1000
    return if (frac == 0L) "$ms" else "$ms." + "%03d".format(frac).trimEnd('0')
}

/** Parse and validate a steps string. */
fun parseSteps(input: String): Step {
    val bytes = input.toByteArray(StandardCharsets.UTF_8)
    if (bytes.size > Limits.MAX_INPUT_LEN) {
        throw StepsError("input longer than ${Limits.MAX_INPUT_LEN} bytes", Limits.MAX_INPUT_LEN)
    }
    val p = StepParser(bytes)
    p.skipWs()
    if (p.atEnd()) throw p.err("empty workload: expected a step such as 'sleep:100'")
    val items = p.list(0)
    p.skipWs()
    if (!p.atEnd()) {
        throw p.err(if (p.peek() == ')'.code) "unexpected ')'" else "unexpected '${p.peekChar()}'")
    }
    return if (items.size == 1) items[0] else Step.Seq(items)
}

private class StepParser(private val s: ByteArray) {
    var pos = 0
    private var leaves = 0

    fun err(message: String) = StepsError(message, pos)

    fun atEnd() = pos >= s.size

    /** The byte at the cursor, or -1 at the end. */
    fun peek(): Int = if (pos < s.size) s[pos].toInt() and 0xff else -1

    /** The whole character at the cursor (the cursor is always on a char boundary). */
    fun peekChar(): String {
        if (atEnd()) return "?"
        val end = minOf(s.size, pos + 4)
        val text = String(s, pos, end - pos, StandardCharsets.UTF_8)
        return String(Character.toChars(text.codePointAt(0)))
    }

    fun skipWs() {
        while (peek() == ' '.code || peek() == '\t'.code) pos++
    }

    fun list(depth: Int): List<Step> {
        val items = mutableListOf(item(depth))
        while (true) {
            skipWs()
            if (peek() == ','.code) {
                pos++
                skipWs()
                items.add(item(depth))
            } else {
                return items
            }
        }
    }

    private fun isAlpha(c: Int) = c in 'a'.code..'z'.code || c in 'A'.code..'Z'.code

    private fun isDigit(c: Int) = c in '0'.code..'9'.code

    private fun take(pred: (Int) -> Boolean): String {
        val start = pos
        while (peek() != -1 && pred(peek())) pos++
        return String(s, start, pos - start, StandardCharsets.US_ASCII)
    }

    private fun item(depth: Int): Step {
        skipWs()
        val start = pos
        val word = take(::isAlpha)
        when (word) {
            "seq", "par" -> {
                if (peek() != '('.code) throw err("expected '(' after '$word'")
                if (depth + 1 > Limits.MAX_DEPTH) {
                    throw err("nesting deeper than ${Limits.MAX_DEPTH} levels")
                }
                pos++
                skipWs()
                if (peek() == ')'.code) throw err("'$word(...)' needs at least one step")
                val children = list(depth + 1)
                skipWs()
                if (peek() != ')'.code) throw err("expected ')'")
                pos++
                return if (word == "seq") Step.Seq(children) else Step.Par(children)
            }
            "cpu", "sleep", "http", "pg", "mc" -> {
                if (peek() != ':'.code) throw err("expected ':' after '$word'")
                pos++
                leaves++
                if (leaves > Limits.MAX_LEAVES) {
                    pos = start
                    throw err("more than ${Limits.MAX_LEAVES} steps")
                }
                return when (word) {
                    "cpu" -> Step.Cpu(whole())
                    "mc" -> Step.Io(BackendKind.MC, key = key())
                    else -> {
                        val micros = millis()
                        val kind = when (word) {
                            "sleep" -> BackendKind.SLEEP
                            "http" -> BackendKind.HTTP
                            else -> BackendKind.PG
                        }
                        Step.Io(kind, micros)
                    }
                }
            }
            "" -> throw if (atEnd()) err("expected a step") else err("expected a step, found '${peekChar()}'")
            else -> {
                pos = start
                throw err("unknown step '$word' (expected $STEP_WORDS)")
            }
        }
    }

    private fun whole(): Long {
        val start = pos
        val d = take(::isDigit)
        if (d.isEmpty()) throw err("expected a whole number of terms")
        val n = d.toLongOrNull()
        if (n == null || n > Limits.MAX_CPU_TERMS) {
            pos = start
            throw err("cpu terms above the limit of ${Limits.MAX_CPU_TERMS}")
        }
        return n
    }

    private fun millis(): Long {
        val start = pos
        val int = take(::isDigit)
        var text = int
        if (peek() == '.'.code) {
            pos++
            val frac = take(::isDigit)
            if (frac.isEmpty()) throw err("expected digits after '.'")
            text = "$int.$frac"
        }
        if (int.isEmpty()) {
            pos = start
            throw err("expected milliseconds, e.g. 200 or 0.5")
        }
        val ms = text.toDoubleOrNull() ?: throw err("bad number")
        if (ms > Limits.MAX_MS) {
            pos = start
            throw err("$text ms is above the limit of ${Limits.MAX_MS_TEXT} ms")
        }
        return Math.round(ms * 1000.0)
    }

    private fun key(): String {
        val start = pos
        val key = take { c -> isAlpha(c) || isDigit(c) || c == '_'.code || c == '.'.code || c == '-'.code || c == ':'.code }
        if (key.isEmpty()) throw err("expected a memcached key")
        if (key.length > Limits.MAX_KEY_LEN) {
            pos = start
            throw err("memcached key longer than ${Limits.MAX_KEY_LEN} bytes")
        }
        return key
    }
}
