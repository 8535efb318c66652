// Which backends this target can reach: the embedded `sleep`, and `http` when the delay service's
// URL is given. It has no pg or mc client: those steps are refused like an unconfigured backend.
// A refused request is refused before any of its work runs, with the Rust targets' wording.
package iolab.play;

final class Backends {
    /** The delay service client, or null. */
    final HttpBackend http;

    Backends(HttpBackend http) {
        this.http = http;
    }

    private boolean configured(Step.Kind kind) {
        return switch (kind) {
            case SLEEP -> true;
            case HTTP -> http != null;
            case PG, MC -> false;
        };
    }

    static String notConfigured(Step.Kind kind) {
        String why = switch (kind) {
            case HTTP -> "start the target with --http-backend URL (see `iolab serve --help`)";
            default -> "the play runtime has no " + kind.label + " client (its backends: sleep, http)";
        };
        return "backend '" + kind.label + "' not configured: " + why;
    }

    /**
     * Parse {@code steps}, check the answer's {@code body} ({@code json}, the default, or {@code value})
     * and every backend it names, in the Rust targets' order; throws WorkError (400) at the first fault.
     */
    Step plan(String steps, String body) {
        if (steps == null) throw new WorkError(400, Answers.MISSING_STEPS);
        Step step;
        try {
            step = StepsParser.parse(steps);
        } catch (StepsParser.StepsError e) {
            throw new WorkError(400, e.getMessage());
        }
        if (body != null && !body.equals("json")) {
            if (!body.equals("value")) {
                throw new WorkError(400, "query parameter 'body' is '" + body + "': expected 'json' (the default) or 'value'");
            }
            // body=value needs an mc step, and this runtime refuses every mc step below.
            if (!step.backends().contains(Step.Kind.MC)) throw new WorkError(400, Answers.VALUE_NEEDS_MC);
        }
        for (Step.Kind kind : Step.Kind.values()) {
            if (step.backends().contains(kind) && !configured(kind)) {
                Counters.backendCall(kind);
                throw new WorkError(400, notConfigured(kind));
            }
        }
        return step;
    }
}
