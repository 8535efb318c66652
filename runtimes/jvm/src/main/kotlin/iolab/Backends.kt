// Which backends this target can reach: the embedded `sleep`, and `http`, `pg` and `mc`
// when their addresses are given. A step naming any other backend is refused up front, before any of
// its work runs, with the Rust targets' message.
package iolab

class Backends(val http: HttpBackend? = null, val pg: PgBackend? = null, val mc: McBackend? = null) {
    /** The `iolab serve` flag that would configure [kind] (crates/backends `config_flag`). */
    private fun flag(kind: BackendKind) = when (kind) {
        BackendKind.SLEEP -> "nothing (sleep is embedded)"
        BackendKind.HTTP -> "--http-backend URL"
        BackendKind.PG -> "--pg URL"
        BackendKind.MC -> "--mc HOST:PORT"
    }

    private fun configured(kind: BackendKind) = when (kind) {
        BackendKind.SLEEP -> true
        BackendKind.HTTP -> http != null
        BackendKind.PG -> pg != null
        BackendKind.MC -> mc != null
    }

    fun notConfigured(kind: BackendKind) =
        "backend '${kind.label}' not configured: start the target with ${flag(kind)} (see `iolab serve --help`)"

    /**
     * Parse [steps], check the answer's [body] (`json`, the default, or `value`: the last `mc`
     * step's value) and every backend it names, in the Rust targets' order; throws
     * [WorkError] (400) at the first fault.
     */
    fun plan(steps: String?, body: String? = null): Step {
        if (steps == null) throw WorkError(400, Answers.MISSING_STEPS)
        val step = try {
            parseSteps(steps)
        } catch (e: StepsError) {
            throw WorkError(400, e.message!!)
        }
        when (body) {
            null, "json" -> {}
            "value" -> if (BackendKind.MC !in step.backends()) throw WorkError(400, Answers.VALUE_NEEDS_MC)
            else -> throw WorkError(400, "query parameter 'body' is '$body': expected 'json' (the default) or 'value'")
        }
        for (kind in BackendKind.entries) {
            if (kind in step.backends() && !configured(kind)) {
                Counters.backendCall(kind)
                throw WorkError(400, notConfigured(kind))
            }
        }
        return step
    }
}
