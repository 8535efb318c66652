// The launcher's flags as Play configuration, on top of application.conf (which carries the
// article's default dispatcher: fork-join, factor 1.0, max 24, LIFO). `--threads` (pool) or
// `--workers` (loop models) fix the default dispatcher's size.
package iolab.play;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

final class PlayConfig {
    private PlayConfig() {}

    private static final String FJ = "pekko.actor.default-dispatcher.fork-join-executor.";

    static Map<String, Object> of(Settings s) {
        Map<String, Object> c = new LinkedHashMap<>();
        // Prod mode refuses to start without a secret; nothing here is signed, so any will do.
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        c.put("play.http.secret.key", HexFormat.of().formatHex(secret));
        Integer size = s.threads() != null ? s.threads() : s.workers();
        if (size != null) {
            c.put(FJ + "parallelism-min", size);
            c.put(FJ + "parallelism-max", size);
        }
        return c;
    }
}
