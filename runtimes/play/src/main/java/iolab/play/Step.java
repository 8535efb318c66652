// One step of a workload, as crates/model/src/steps/parse.rs defines it: a leaf (cpu or one
// backend call) or a sequence / fan-out of steps. StepsParser builds them from text.
package iolab.play;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

public sealed interface Step {
    /** The backends an IO step can go to; {@code label} is the metric label and step word. */
    enum Kind {
        SLEEP("sleep"),
        HTTP("http"),
        PG("pg"),
        MC("mc");

        public final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    /** {@code cpu:N}: N terms of the Leibniz series on the calling thread. */
    record Cpu(long terms) implements Step {}

    /** One backend call; timed calls keep whole microseconds, as in Rust; {@code mc} has a key. */
    record Io(Kind kind, long micros, String key) implements Step {}

    /** Children one after another. */
    record Seq(List<Step> children) implements Step {}

    /** Children at the same time, in whatever way the model can. */
    record Par(List<Step> children) implements Step {}

    /** Number of leaf steps: the contract's {@code "steps"} field. */
    default int leafCount() {
        return switch (this) {
            case Cpu c -> 1;
            case Io i -> 1;
            case Seq s -> s.children().stream().mapToInt(Step::leafCount).sum();
            case Par p -> p.children().stream().mapToInt(Step::leafCount).sum();
        };
    }

    /** Every backend the workload calls, so a request fails before doing any work. */
    default Set<Kind> backends() {
        Set<Kind> out = EnumSet.noneOf(Kind.class);
        collect(this, out);
        return out;
    }

    private static void collect(Step step, Set<Kind> out) {
        switch (step) {
            case Cpu c -> {}
            case Io i -> out.add(i.kind());
            case Seq s -> s.children().forEach(c -> collect(c, out));
            case Par p -> p.children().forEach(c -> collect(c, out));
        }
    }

    /** The canonical text: {@code parse(step.canonical())} gives the same step. */
    default String canonical() {
        return switch (this) {
            case Cpu c -> "cpu:" + c.terms();
            case Io i -> i.kind() == Kind.MC ? "mc:" + i.key() : i.kind().label + ":" + millisText(i.micros());
            case Seq s -> s.children().stream().map(Step::canonical).collect(Collectors.joining(",", "seq(", ")"));
            case Par p -> p.children().stream().map(Step::canonical).collect(Collectors.joining(",", "par(", ")"));
        };
    }

    /** Milliseconds as text: whole numbers bare, fractions with up to 3 decimals. */
    static String millisText(long micros) {
        long ms = micros / 1000;
        long frac = micros % 1000;
        if (frac == 0) return Long.toString(ms);
        String digits = String.format(java.util.Locale.ROOT, "%03d", frac).replaceAll("0+$", "");
        return ms + "." + digits;
    }
}
