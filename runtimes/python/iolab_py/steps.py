"""The workload language (crates/model/src/steps/parse.rs), parsed to the same tree, canonical text
and error texts byte for byte (vectors/steps.json pins them).

    steps := item (',' item)*            a top-level list runs in sequence
    item  := seq(steps) | par(steps) | leaf
    leaf  := cpu:N | sleep:MS | http:MS | pg:MS | mc:KEY

Positions in errors are byte offsets, so the parser walks the UTF-8 bytes, not characters.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_DEPTH = 16
MAX_LEAVES = 1_000
MAX_MS = 3_600_000.0
MAX_CPU_TERMS = 100_000_000_000
MAX_KEY_LEN = 250
MAX_INPUT_LEN = 16_384

KINDS = ("sleep", "http", "pg", "mc")
# Every word that starts a step, as the unknown-step message lists them (from KINDS).
_WORDS = ("cpu",) + KINDS + ("seq", "par")
STEP_WORDS = ", ".join(_WORDS[:-1]) + " or " + _WORDS[-1]
_KEY_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-:")


@dataclass(frozen=True)
class Cpu:
    terms: int


@dataclass(frozen=True)
class Io:
    """One backend call: `micros` for sleep/http/pg, `key` for mc."""

    kind: str
    micros: int = 0
    key: str = ""


@dataclass(frozen=True)
class Seq:
    children: tuple


@dataclass(frozen=True)
class Par:
    children: tuple


class StepsError(ValueError):
    """A fault in a steps string; str() is the contract's `steps: MESSAGE at POSITION`."""

    def __init__(self, message: str, position: int):
        super().__init__(f"steps: {message} at {position}")
        self.message = message
        self.position = position


def leaf_count(step) -> int:
    if isinstance(step, (Seq, Par)):
        return sum(leaf_count(c) for c in step.children)
    return 1


def kinds(step) -> set:
    """The backend kinds the workload calls."""
    if isinstance(step, Io):
        return {step.kind}
    if isinstance(step, (Seq, Par)):
        return set().union(*(kinds(c) for c in step.children))
    return set()


def millis_text(micros: int) -> str:
    """Milliseconds as the canonical text: whole numbers bare, else up to 3 decimals."""
    ms, frac = divmod(micros, 1000)
    return str(ms) if frac == 0 else f"{ms}.{frac:03d}".rstrip("0")


def canonical(step) -> str:
    if isinstance(step, Cpu):
        return f"cpu:{step.terms}"
    if isinstance(step, Io):
        return f"mc:{step.key}" if step.kind == "mc" else f"{step.kind}:{millis_text(step.micros)}"
    name = "seq" if isinstance(step, Seq) else "par"
    return f"{name}({','.join(canonical(c) for c in step.children)})"


def parse(text: str):
    """Parse and validate a steps string; raises StepsError."""
    data = text.encode("utf-8")
    if len(data) > MAX_INPUT_LEN:
        raise StepsError(f"input longer than {MAX_INPUT_LEN} bytes", MAX_INPUT_LEN)
    p = _Parser(data)
    p.skip_ws()
    if p.at_end():
        raise p.err("empty workload: expected a step such as 'sleep:100'")
    items = p.list(0)
    p.skip_ws()
    if not p.at_end():
        raise p.err("unexpected ')'" if p.peek() == ord(")") else f"unexpected '{p.peek_char()}'")
    return items[0] if len(items) == 1 else Seq(tuple(items))


class _Parser:
    def __init__(self, data: bytes):
        self.s = data
        self.pos = 0
        self.leaves = 0

    def err(self, message: str) -> StepsError:
        return StepsError(message, self.pos)

    def at_end(self) -> bool:
        return self.pos >= len(self.s)

    def peek(self):
        return self.s[self.pos] if self.pos < len(self.s) else None

    def peek_char(self) -> str:
        rest = self.s[self.pos:]
        for end in range(1, min(4, len(rest)) + 1):
            try:
                return rest[:end].decode("utf-8")
            except UnicodeDecodeError:
                continue
        return "?"

    def skip_ws(self):
        while self.peek() in (0x20, 0x09):
            self.pos += 1

    def list(self, depth: int) -> list:
        items = [self.item(depth)]
        while True:
            self.skip_ws()
            if self.peek() != ord(","):
                return items
            self.pos += 1
            self.skip_ws()
            items.append(self.item(depth))

    def _run(self, accept) -> str:
        start = self.pos
        while self.peek() is not None and accept(self.peek()):
            self.pos += 1
        return self.s[start:self.pos].decode("ascii")

    def word(self) -> str:
        return self._run(lambda c: 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A)

    def digits(self) -> str:
        return self._run(lambda c: 0x30 <= c <= 0x39)

    def item(self, depth: int):
        self.skip_ws()
        start = self.pos
        word = self.word()
        if word in ("seq", "par"):
            return self.group(word, depth)
        if word in ("cpu",) + KINDS:
            if self.peek() != ord(":"):
                raise self.err(f"expected ':' after '{word}'")
            self.pos += 1
            self.leaves += 1
            if self.leaves > MAX_LEAVES:
                self.pos = start
                raise self.err(f"more than {MAX_LEAVES} steps")
            if word == "cpu":
                return Cpu(self.whole())
            if word == "mc":
                return Io("mc", key=self.key())
            return Io(word, micros=self.millis())
        if word == "":
            if self.at_end():
                raise self.err("expected a step")
            raise self.err(f"expected a step, found '{self.peek_char()}'")
        self.pos = start
        raise self.err(f"unknown step '{word}' (expected {STEP_WORDS})")

    def group(self, word: str, depth: int):
        if self.peek() != ord("("):
            raise self.err(f"expected '(' after '{word}'")
        if depth + 1 > MAX_DEPTH:
            raise self.err(f"nesting deeper than {MAX_DEPTH} levels")
        self.pos += 1
        self.skip_ws()
        if self.peek() == ord(")"):
            raise self.err(f"'{word}(...)' needs at least one step")
        children = tuple(self.list(depth + 1))
        self.skip_ws()
        if self.peek() != ord(")"):
            raise self.err("expected ')'")
        self.pos += 1
        return Seq(children) if word == "seq" else Par(children)

    def whole(self) -> int:
        start = self.pos
        d = self.digits()
        if not d:
            raise self.err("expected a whole number of terms")
        if int(d) > MAX_CPU_TERMS:
            self.pos = start
            raise self.err(f"cpu terms above the limit of {MAX_CPU_TERMS}")
        return int(d)

    def millis(self) -> int:
        start = self.pos
        whole = self.digits()
        text = whole
        if self.peek() == ord("."):
            self.pos += 1
            frac = self.digits()
            if not frac:
                raise self.err("expected digits after '.'")
            text = f"{whole}.{frac}"
        if not whole:
            self.pos = start
            raise self.err("expected milliseconds, e.g. 200 or 0.5")
        ms = float(text)
        if ms > MAX_MS:
            self.pos = start
            raise self.err(f"{text} ms is above the limit of {int(MAX_MS)} ms")
        # Rust's f64::round: halves away from zero (Python's round() would go to even).
        return int(ms * 1000.0 + 0.5)

    def key(self) -> str:
        start = self.pos
        key = self._run(lambda c: c in _KEY_BYTES)
        if not key:
            raise self.err("expected a memcached key")
        if len(key) > MAX_KEY_LEN:
            self.pos = start
            raise self.err(f"memcached key longer than {MAX_KEY_LEN} bytes")
        return key
