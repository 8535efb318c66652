// Every case of vectors/steps.json against the Kotlin parser: the same canonical text,
// leaf count, or the exact error string the Rust parser gives.
package iolab

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.ObjectMapper
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.assertThrows
import java.io.File

/** The repository's shared vectors folder (set by the pom; falls back to the relative path). */
fun vectorsDir(): File = File(System.getProperty("iolab.vectors") ?: "../../vectors")

fun readVectors(name: String): JsonNode = ObjectMapper().readTree(File(vectorsDir(), name))

class StepsVectorsTest {
    @TestFactory
    fun `every shared steps vector`(): List<DynamicTest> {
        val cases = readVectors("steps.json")["cases"]
        assertTrue(cases.size() >= 30, "vectors/steps.json has ${cases.size()} cases")
        return cases.map { case ->
            val input = case["input"].asText()
            DynamicTest.dynamicTest("'$input'") {
                if (case.has("error")) {
                    val e = assertThrows<StepsError> { parseSteps(input) }
                    assertEquals(case["error"].asText(), e.message)
                } else {
                    val step = parseSteps(input)
                    assertEquals(case["canonical"].asText(), step.canonical())
                    assertEquals(case["leaves"].asInt(), step.leafCount())
                    assertEquals(step, parseSteps(step.canonical()), "canonical text round-trips")
                }
            }
        }
    }

    @Test
    fun `limits match the Rust parser`() {
        val wide = List(Limits.MAX_LEAVES + 1) { "sleep:1" }.joinToString(",")
        assertEquals("steps: more than 1000 steps at 8000", assertThrows<StepsError> { parseSteps(wide) }.message)
        val long = "sleep:1," .repeat(3000)
        assertEquals("steps: input longer than 16384 bytes at 16384", assertThrows<StepsError> { parseSteps(long) }.message)
        val key = "k".repeat(251)
        assertEquals("steps: memcached key longer than 250 bytes at 3", assertThrows<StepsError> { parseSteps("mc:$key") }.message)
    }

    @Test
    fun `positions are utf8 byte offsets and characters are whole`() {
        assertEquals("steps: expected a step, found 'é' at 0", assertThrows<StepsError> { parseSteps("é") }.message)
        assertEquals("steps: unexpected '→' at 7", assertThrows<StepsError> { parseSteps("sleep:1→") }.message)
        assertEquals("steps: expected a step, found '😀' at 8", assertThrows<StepsError> { parseSteps("sleep:1,😀") }.message)
    }

    @Test
    fun `fractions round to microseconds and print canonically`() {
        assertEquals(Step.Io(BackendKind.SLEEP, 500), parseSteps("sleep:0.5"))
        assertEquals("http:12.125", parseSteps("http:12.1254").canonical())
        assertEquals("seq(pg:200,http:500,mc:big)", parseSteps("seq(pg:200, http:500, mc:big)").canonical())
    }
}
