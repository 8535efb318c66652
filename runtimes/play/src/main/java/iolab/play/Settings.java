// The launcher's flags (runtimes/README.md), validated into one value before Play starts.
package iolab.play;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

public record Settings(
        Model model,
        int port,
        /** pool: Play's default dispatcher size (else the article's Play sizing, see PlayConfig). */
        Integer threads,
        /** loop-*: the same dispatcher, where the loop's continuations run. */
        Integer workers,
        /** loop-offload: a pool of this many threads instead of the JVM common pool. */
        Integer offload,
        /** Base URL of iolab's delay service for {@code http:MS} steps, or null. */
        String httpBackend,
        /** Requests sent to itself before the URL line (JIT warm-up). */
        int warmup,
        /** Port of the separate /metrics listener, or null for none. */
        Integer metricsPort,
        /** Notes for stderr (flags accepted but without effect here). */
        List<String> notes) {

    /** Most warm-up requests: bounded, like every load loop. */
    static final int MAX_WARMUP = 100_000;

    /** Flags that take a value. */
    private static final Set<String> VALUED = Set.of(
            "model", "port", "threads", "workers", "offload", "http-backend", "pg", "mc", "pg-wait",
            "warmup", "metrics-port", "backlog", "max-connections", "max-threads", "processes", "mc-pool", "pg-pool");

    /** iolab's knobs (crates/model) this runtime has no mechanism for, under any model. */
    private static final Set<String> FOREIGN_KNOBS =
            Set.of("backlog", "max-connections", "max-threads", "processes", "mc-pool", "pg-pool");

    static final String USAGE = "usage: ./start --model " + String.join("|", Model.NAMES.split(", "))
            + " [--port P] [--threads N] [--workers N] [--offload N] [--http-backend URL] [--warmup N] [--metrics-port P]";

    /** Parse the launcher's argv; environment fallbacks as `iolab serve` has them. */
    public static Settings parse(String[] args, Map<String, String> env) throws UsageError {
        Map<String, String> flags = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) throw new UsageError("unexpected argument '" + arg + "' (" + USAGE + ")");
            String name = arg.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (!VALUED.contains(name)) throw new UsageError("unknown flag '--" + name + "' (" + USAGE + ")");
            if (value == null) {
                if (i + 1 >= args.length) throw new UsageError("--" + name + " needs a value (" + USAGE + ")");
                value = args[++i];
            }
            flags.put(name, value);
        }
        String label = flags.get("model");
        if (label == null) throw new UsageError("missing --model (expected one of: " + Model.NAMES + ")");
        Model model = Model.of(label)
                .orElseThrow(() -> new UsageError("unknown model '" + label + "' (expected one of: " + Model.NAMES + ")"));
        for (String flag : flags.keySet()) {
            boolean knob = FOREIGN_KNOBS.contains(flag) || List.of("threads", "workers", "offload").contains(flag);
            if (knob && !model.knobs.contains(flag)) {
                throw new UsageError("--" + flag + " does not apply to model '" + model.label + "' in the play runtime"
                        + " (its knobs: " + (model.knobs.isEmpty() ? "none" : "--" + String.join(", --", model.knobs)) + ")");
            }
        }
        List<String> notes = new ArrayList<>();
        String http = flags.getOrDefault("http-backend", emptyToNull(env.get("IOLAB_HTTP_BACKEND")));
        for (String b : List.of("pg", "mc")) {
            String given = flags.getOrDefault(b, emptyToNull(env.get("IOLAB_" + b.toUpperCase())));
            if (given != null) notes.add("play: ignoring the " + b + " backend (" + given + "): this runtime has no " + b
                    + " client, so " + b + " steps answer 400");
        }
        return new Settings(
                model,
                number(flags, "port", 0, 65_535, 0),
                count(flags, "threads"),
                count(flags, "workers"),
                count(flags, "offload"),
                http == null ? null : checkUrl(http),
                number(flags, "warmup", 0, MAX_WARMUP, 0),
                flags.containsKey("metrics-port") ? number(flags, "metrics-port", 0, 65_535, 0) : null,
                List.copyOf(notes));
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    private static Integer count(Map<String, String> flags, String name) throws UsageError {
        return flags.containsKey(name) ? number(flags, name, 1, 100_000, 0) : null;
    }

    private static int number(Map<String, String> flags, String name, int min, int max, int dflt) throws UsageError {
        String text = flags.get(name);
        if (text == null) return dflt;
        try {
            int n = Integer.parseInt(text);
            if (n >= min && n <= max) return n;
        } catch (NumberFormatException e) {
            // fall through to the message
        }
        throw new UsageError("--" + name + " must be a whole number from " + min + " to " + max + ", got '" + text + "'");
    }

    /** An {@code http://HOST:PORT} base URL, else a usage error naming the fix. */
    static String checkUrl(String url) throws UsageError {
        String fix = "use http://HOST:PORT, e.g. the URL `iolab backend http` prints";
        if (!url.startsWith("http://")) throw new UsageError("--http-backend '" + url + "' is not an http:// URL: " + fix);
        try {
            if (URI.create(url).getHost() == null) throw new IllegalArgumentException();
        } catch (IllegalArgumentException e) {
            throw new UsageError("--http-backend '" + url + "' is not a valid URL: " + fix);
        }
        return url.replaceAll("/+$", "");
    }
}
