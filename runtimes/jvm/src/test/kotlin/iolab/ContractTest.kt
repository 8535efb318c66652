// Every case of vectors/contract.json against every JVM model, each a real server on a
// random loopback port. The `http` backend is always configured (a delay service on
// loopback), `pg` and `mc` when the test command's services are there (Services.kt): a
// configured backend's cases expect the real answer, the others `unconfigured`.
package iolab

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.TextNode
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource

class ContractTest {
    @ParameterizedTest
    @EnumSource(JvmModel::class)
    fun `every contract vector`(model: JvmModel) {
        val cases = readVectors("contract.json")["cases"]
        assertTrue(cases.size() >= 17, "vectors/contract.json has ${cases.size()} cases")
        val faults = mutableListOf<String>()
        DelayService().use { delay ->
            val real = if (Services.present) arrayOf("--iolab.pg=${Services.pg}", "--iolab.mc=${Services.mc}") else emptyArray()
            Target("--iolab.model=${model.label}", "--iolab.http-backend=${delay.url}", *real).use { target ->
            for (case in cases) {
                val configured = !case.has("needs") || case["needs"].asText() == "http" || real.isNotEmpty()
                // A case may say only how an unconfigured target answers (its key need not exist).
                val expect = (if (configured) case["expect"] else case["unconfigured"]) ?: continue
                val name = case["name"].asText()
                val answer = runCatching { target.get(case["path"].asText()) }
                    .onFailure { faults += "$name: request failed: $it" }
                    .getOrNull() ?: continue
                faults += check(model, expect, answer).map { "$name: $it" }
            }
            }
        }
        assertTrue(faults.isEmpty(), "model ${model.label}:\n" + faults.joinToString("\n"))
    }

    private fun check(model: JvmModel, expect: JsonNode, a: Answer): List<String> {
        val f = mutableListOf<String>()
        val status = expect["status"].asInt()
        if (a.status != status) f += "status ${a.status}, expected $status (body ${a.body})"
        expect["content_type"]?.asText()?.let {
            if (!a.contentType.startsWith(it)) f += "content type '${a.contentType}', expected '$it'"
        }
        expect["body"]?.let { fields ->
            val body = runCatching { a.json() }.getOrNull()
            if (body == null) {
                f += "body is not JSON: ${a.body}"
            } else {
                fields.properties().forEach { (name, want) ->
                    val w = if (want.isTextual && want.asText() == "\$model") TextNode(model.label) else want
                    if (body[name] != w) f += "field '$name' is ${body[name]}, expected $w"
                }
            }
        }
        expect["body_contains"]?.forEach {
            if (!a.body.contains(it.asText())) f += "body lacks '${it.asText()}': ${a.body}"
        }
        expect["min_ms"]?.asDouble()?.let { if (a.millis < it) f += "took ${a.millis} ms, expected >= $it" }
        expect["max_ms"]?.asDouble()?.let { if (a.millis > it) f += "took ${a.millis} ms, expected <= $it" }
        return f
    }
}
