// Which backends this target can reach: the embedded `sleep`, and `http` when a delay
// service is given. A step naming any other backend is refused up front, before any of
// its work runs, with the Rust targets' message.
package iolab

class Backends(val http: HttpBackend?) {
    /** The `iolab serve` flag that would configure [kind] (crates/backends `config_flag`). */
    private fun flag(kind: BackendKind) = when (kind) {
        BackendKind.SLEEP -> "nothing (sleep is embedded)"
        BackendKind.HTTP -> "--http-backend URL"
        BackendKind.PG -> "--pg URL"
        BackendKind.MC -> "--mc HOST:PORT"
    }

    private fun configured(kind: BackendKind) = kind == BackendKind.SLEEP || (kind == BackendKind.HTTP && http != null)

    fun notConfigured(kind: BackendKind) =
        "backend '${kind.label}' not configured: start the target with ${flag(kind)} (see `iolab serve --help`)"

    /** Parse [steps] and check every backend it names; throws [WorkError] (400) if not. */
    fun plan(steps: String?): Step {
        if (steps == null) throw WorkError(400, Answers.MISSING_STEPS)
        val step = try {
            parseSteps(steps)
        } catch (e: StepsError) {
            throw WorkError(400, e.message!!)
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
