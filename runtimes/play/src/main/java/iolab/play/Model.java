// The three models this runtime serves: the E5 article's three Play endpoints.
package iolab.play;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

public enum Model {
    /** sync-blocking: the steps run blocking on the request's thread of Play's default pool. */
    POOL("pool", List.of("threads")),

    /** async-blocking: each IO call blocks a thread of the common pool ({@code supplyAsync}). */
    LOOP_OFFLOAD("loop-offload", List.of("workers", "offload")),

    /** async-non-blocking: each IO value is completed by a timer or a non-blocking client. */
    LOOP_ASYNC("loop-async", List.of("workers"));

    public final String label;

    /** The launcher flags (without {@code --}) of the knobs that apply to this model. */
    public final List<String> knobs;

    Model(String label, List<String> knobs) {
        this.label = label;
        this.knobs = knobs;
    }

    public static final String NAMES = Arrays.stream(values()).map(m -> m.label).collect(Collectors.joining(", "));

    public static Optional<Model> of(String label) {
        return Arrays.stream(values()).filter(m -> m.label.equals(label)).findFirst();
    }
}
