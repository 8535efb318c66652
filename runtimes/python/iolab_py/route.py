"""From a request's method, path and raw query to what it asks for, with the Rust targets'
400 messages (crates/servers/src/routes.rs): the query is split on '&', the first `steps=` and
`body=` win, values are percent-decoded ('+' is a space)."""

from dataclasses import dataclass

from . import answers, steps
from .answers import WorkError

_FLAGS = {"sleep": "nothing (sleep is embedded)", "http": "--http-backend URL",
          "pg": "--pg URL", "mc": "--mc HOST:PORT"}


@dataclass(frozen=True)
class Work:
    step: object
    value: bool  # body=value: answer the last mc step's bytes instead of the JSON


def percent_decode(raw: str) -> str:
    b = raw.encode("latin-1", "replace")
    out = bytearray()
    i = 0
    while i < len(b):
        c = b[i]
        if c == 0x25:  # '%'
            h = b[i + 1:i + 3]
            if len(h) != 2 or not all(x in b"0123456789abcdefABCDEF" for x in h):
                raise WorkError(400, f"bad percent-encoding in query at {i}: "
                                     "expected %XX with two hex digits")
            out.append(int(h, 16))
            i += 3
        else:
            out.append(0x20 if c == 0x2B else c)
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise WorkError(400, "query is not UTF-8 after percent-decoding") from None


def param(query: str, name: str):
    """The first value of `name`, decoded, or None."""
    prefix = name + "="
    for pair in query.split("&") if query else ():
        if pair.startswith(prefix):
            return percent_decode(pair[len(prefix):])
    return None


def not_configured(kind: str) -> str:
    return (f"backend '{kind}' not configured: start the target with {_FLAGS[kind]} "
            "(see `iolab serve --help`)")


def plan(query: str, configured, count_call) -> Work:
    """Parse `/work`'s query; every fault is a WorkError(400), in the Rust targets' order. A
    step naming a backend that is not configured is refused before any work runs, and counted
    as a call of that kind (as the Rust and JVM targets count it)."""
    text = param(query, "steps")
    if text is None:
        raise WorkError(400, answers.MISSING_STEPS)
    try:
        step = steps.parse(text)
    except steps.StepsError as e:
        raise WorkError(400, str(e)) from None
    body = param(query, "body")
    if body not in (None, "json", "value"):
        raise WorkError(400, f"query parameter 'body' is '{body}': "
                             "expected 'json' (the default) or 'value'")
    used = steps.kinds(step)
    if body == "value" and "mc" not in used:
        raise WorkError(400, answers.VALUE_NEEDS_MC)
    for kind in steps.KINDS:
        if kind in used and kind not in configured:
            count_call(kind)
            raise WorkError(400, not_configured(kind))
    return Work(step, body == "value")
