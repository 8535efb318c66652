// The contract's JSON bodies, written by hand so field order and wording match the Rust targets
// byte for byte: {"ok":true,"model":"pool","steps":3,"elapsed_ms":12.345} and {"ok":false,"error":"..."}.
package iolab.play;

import java.util.Locale;

final class Answers {
    private Answers() {}

    static final String MISSING_STEPS = "missing query parameter 'steps', e.g. /work?steps=sleep:100";
    static final String VALUE_NEEDS_MC =
            "body=value answers the value of the last mc step, but steps has none: e.g. /work?steps=mc:test&body=value";

    static String ok(Model model, int steps, long elapsedNanos) {
        String ms = String.format(Locale.ROOT, "%.3f", elapsedNanos / 1e6);
        return "{\"ok\":true,\"model\":\"" + model.label + "\",\"steps\":" + steps + ",\"elapsed_ms\":" + ms + "}";
    }

    static String health(Model model) {
        return "{\"ok\":true,\"model\":\"" + model.label + "\"}";
    }

    static String error(String message) {
        return "{\"ok\":false,\"error\":" + quote(message) + "}";
    }

    /** A JSON string literal (RFC 8259 escapes). */
    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < ' ') b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }

    /** Down the cause chain, each distinct message (or the class's name where it has none),
     *  joined by ": ", leaving out the wrappers of futures: why a client library failed. */
    static String causes(Throwable e) {
        java.util.LinkedHashSet<String> seen = new java.util.LinkedHashSet<>();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) continue;
            seen.add(t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName());
        }
        return String.join(": ", seen);
    }
}
