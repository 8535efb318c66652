// The workload language, ported from crates/model/src/steps/parse.rs (via runtimes/jvm Steps.kt):
//
//     steps := item (',' item)*            a top-level list runs in sequence
//     item  := seq(steps) | par(steps) | leaf
//     leaf  := cpu:N | sleep:MS | http:MS | pg:MS | mc:KEY
//
// Positions in errors are UTF-8 byte offsets, as in Rust, so the parser works on the input's
// UTF-8 bytes. vectors/steps.json pins every message.
package iolab.play;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

public final class StepsParser {
    /** Every word that starts a step, as the unknown-step message lists them (from {@link Step.Kind}). */
    private static final String STEP_WORDS = java.util.stream.Stream.concat(
                    java.util.stream.Stream.concat(java.util.stream.Stream.of("cpu"),
                            java.util.Arrays.stream(Step.Kind.values()).map(k -> k.label)),
                    java.util.stream.Stream.of("seq"))
            .collect(java.util.stream.Collectors.joining(", ")) + " or par";

    /** Limits that keep one request's work bounded whatever a client sends. */
    static final int MAX_DEPTH = 16;
    static final int MAX_LEAVES = 1_000;
    static final double MAX_MS = 3_600_000.0;
    static final String MAX_MS_TEXT = "3600000";
    static final long MAX_CPU_TERMS = 100_000_000_000L;
    static final int MAX_KEY_LEN = 250;
    static final int MAX_INPUT_LEN = 16_384;

    /** A fault in a steps string, with the byte offset where it was found. */
    public static final class StepsError extends Exception {
        StepsError(String detail, int position) {
            super("steps: " + detail + " at " + position);
        }
    }

    private final byte[] s;
    private int pos;
    private int leaves;

    private StepsParser(byte[] s) {
        this.s = s;
    }

    /** Parse and validate a steps string. */
    public static Step parse(String input) throws StepsError {
        byte[] bytes = input.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_INPUT_LEN) {
            throw new StepsError("input longer than " + MAX_INPUT_LEN + " bytes", MAX_INPUT_LEN);
        }
        StepsParser p = new StepsParser(bytes);
        p.skipWs();
        if (p.atEnd()) throw p.err("empty workload: expected a step such as 'sleep:100'");
        List<Step> items = p.list(0);
        p.skipWs();
        if (!p.atEnd()) {
            throw p.err(p.peek() == ')' ? "unexpected ')'" : "unexpected '" + p.peekChar() + "'");
        }
        return items.size() == 1 ? items.getFirst() : new Step.Seq(List.copyOf(items));
    }

    private StepsError err(String message) {
        return new StepsError(message, pos);
    }

    private boolean atEnd() {
        return pos >= s.length;
    }

    /** The byte at the cursor, or -1 at the end. */
    private int peek() {
        return pos < s.length ? s[pos] & 0xff : -1;
    }

    /** The whole character at the cursor (the cursor is always on a char boundary). */
    private String peekChar() {
        if (atEnd()) return "?";
        int end = Math.min(s.length, pos + 4);
        String text = new String(s, pos, end - pos, StandardCharsets.UTF_8);
        return new String(Character.toChars(text.codePointAt(0)));
    }

    private void skipWs() {
        while (peek() == ' ' || peek() == '\t') pos++;
    }

    private List<Step> list(int depth) throws StepsError {
        List<Step> items = new ArrayList<>();
        items.add(item(depth));
        while (true) {
            skipWs();
            if (peek() != ',') return items;
            pos++;
            skipWs();
            items.add(item(depth));
        }
    }

    private static boolean isAlpha(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    private static boolean isDigit(int c) {
        return c >= '0' && c <= '9';
    }

    private String take(IntPredicate pred) {
        int start = pos;
        while (peek() != -1 && pred.test(peek())) pos++;
        return new String(s, start, pos - start, StandardCharsets.US_ASCII);
    }

    private Step item(int depth) throws StepsError {
        skipWs();
        int start = pos;
        String word = take(StepsParser::isAlpha);
        switch (word) {
            case "seq", "par" -> {
                if (peek() != '(') throw err("expected '(' after '" + word + "'");
                if (depth + 1 > MAX_DEPTH) throw err("nesting deeper than " + MAX_DEPTH + " levels");
                pos++;
                skipWs();
                if (peek() == ')') throw err("'" + word + "(...)' needs at least one step");
                List<Step> children = List.copyOf(list(depth + 1));
                skipWs();
                if (peek() != ')') throw err("expected ')'");
                pos++;
                return word.equals("seq") ? new Step.Seq(children) : new Step.Par(children);
            }
            case "cpu", "sleep", "http", "pg", "mc" -> {
                if (peek() != ':') throw err("expected ':' after '" + word + "'");
                pos++;
                leaves++;
                if (leaves > MAX_LEAVES) {
                    pos = start;
                    throw err("more than " + MAX_LEAVES + " steps");
                }
                return switch (word) {
                    case "cpu" -> new Step.Cpu(whole());
                    case "mc" -> new Step.Io(Step.Kind.MC, 0, key());
                    case "sleep" -> new Step.Io(Step.Kind.SLEEP, millis(), "");
                    case "http" -> new Step.Io(Step.Kind.HTTP, millis(), "");
                    default -> new Step.Io(Step.Kind.PG, millis(), "");
                };
            }
            case "" -> throw atEnd() ? err("expected a step") : err("expected a step, found '" + peekChar() + "'");
            default -> {
                pos = start;
                throw err("unknown step '" + word + "' (expected " + STEP_WORDS + ")");
            }
        }
    }

    private long whole() throws StepsError {
        int start = pos;
        String d = take(StepsParser::isDigit);
        if (d.isEmpty()) throw err("expected a whole number of terms");
        BigInteger n = new BigInteger(d); // any number of digits, leading zeros too
        if (n.compareTo(BigInteger.valueOf(MAX_CPU_TERMS)) > 0) {
            pos = start;
            throw err("cpu terms above the limit of " + MAX_CPU_TERMS);
        }
        return n.longValueExact();
    }

    private long millis() throws StepsError {
        int start = pos;
        String whole = take(StepsParser::isDigit);
        String text = whole;
        if (peek() == '.') {
            pos++;
            String frac = take(StepsParser::isDigit);
            if (frac.isEmpty()) throw err("expected digits after '.'");
            text = whole + "." + frac;
        }
        if (whole.isEmpty()) {
            pos = start;
            throw err("expected milliseconds, e.g. 200 or 0.5");
        }
        double ms = Double.parseDouble(text);
        if (ms > MAX_MS) {
            pos = start;
            throw err(text + " ms is above the limit of " + MAX_MS_TEXT + " ms");
        }
        return Math.round(ms * 1000.0);
    }

    private String key() throws StepsError {
        int start = pos;
        String key = take(c -> isAlpha(c) || isDigit(c) || c == '_' || c == '.' || c == '-' || c == ':');
        if (key.isEmpty()) throw err("expected a memcached key");
        if (key.length() > MAX_KEY_LEN) {
            pos = start;
            throw err("memcached key longer than " + MAX_KEY_LEN + " bytes");
        }
        return key;
    }
}
