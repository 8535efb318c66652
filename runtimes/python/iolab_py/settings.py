"""The launcher's flags (runtimes/README.md, "The launcher protocol"), validated into one
Settings value; every fault is a UsageError with one line naming it and the fix (exit 2).
The servers' processes get the same Settings as JSON in IOLAB_PY_SETTINGS."""

import json
import os
import re
from dataclasses import asdict, dataclass, field

from .models import KNOBS, MODELS, NAMES, defaults

ENV = "IOLAB_PY_SETTINGS"
MAX_WARMUP = 100_000

_VALUE_FLAGS = ("model", "port", "http-backend", "pg", "mc", "pg-wait", "warmup", "metrics-port")
_ALL_FLAGS = _VALUE_FLAGS + tuple(k.replace("_", "-") for k in KNOBS)


class UsageError(Exception):
    pass


@dataclass
class Settings:
    model: str
    port: int = 0
    knobs: dict = field(default_factory=dict)   # every knob the model reads, defaulted
    http_backend: str = ""
    pg: str = ""
    mc: str = ""
    pg_wait_ms: int = 30_000
    warmup: int = 0
    metrics_port: int = -1                      # -1: no separate listener

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_env(environ=os.environ) -> "Settings":
        raw = environ.get(ENV)
        if not raw:
            raise RuntimeError(f"{ENV} is not set: start the targets through runtimes/python/start")
        return Settings(**json.loads(raw))


def _pairs(argv):
    """--flag VALUE or --flag=VALUE, in order."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("--"):
            raise UsageError(f"unexpected argument '{arg}' (flags look like --model pool)")
        name, eq, value = arg[2:].partition("=")
        if name not in _ALL_FLAGS:
            raise UsageError(f"unknown flag '--{name}' (expected one of: "
                             + ", ".join("--" + f for f in _ALL_FLAGS) + ")")
        if not eq:
            if i + 1 >= len(argv):
                raise UsageError(f"--{name} needs a value")
            value = argv[i + 1]
            i += 1
        i += 1
        yield name, value


def _count(flag: str, text: str, least: int, most: int = 2**31 - 1) -> int:
    if not re.fullmatch(r"[0-9]+", text) or not least <= int(text) <= most:
        raise UsageError(f"--{flag} must be a whole number from {least} to {most}, got '{text}'")
    return int(text)


def _millis(flag: str, text: str) -> int:
    """Milliseconds (the protocol's MS), or a duration as `iolab serve` writes one: 500ms, 30s."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(ms|s)?", text)
    ms = float(m[1]) * (1000 if m[2] == "s" else 1) if m else 0
    if not m or not 1 <= ms <= 3_600_000:
        raise UsageError(f"--{flag} must be milliseconds from 1 to 3600000 (or 500ms, 30s), got '{text}'")
    return round(ms)


def _http_url(url: str) -> str:
    if not re.fullmatch(r"http://[^/:?#]+(:[0-9]{1,5})?/?", url):
        raise UsageError(f"--http-backend '{url}' is not an http://HOST:PORT URL: use e.g. the "
                         "URL `iolab backend http` prints")
    return url.rstrip("/")


def _pg_url(url: str) -> str:
    if not re.match(r"postgres(ql)?://[^/]", url):
        raise UsageError(f"--pg '{url}' is not a PostgreSQL URL: use postgres://USER@HOST:PORT/DB")
    return url


def _mc_addr(addr: str) -> str:
    host, _, port = addr.rpartition(":")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise UsageError(f"--mc '{addr}' is not HOST:PORT: use e.g. 127.0.0.1:11211")
    return addr


def parse(argv, environ=os.environ) -> Settings:
    given = {}
    for name, value in _pairs(argv):
        given[name] = value
    if "model" not in given:
        raise UsageError(f"--model is required (one of: {NAMES})")
    model = given["model"]
    if model not in MODELS:
        raise UsageError(f"unknown model '{model}' for the python runtime (expected one of: {NAMES})")
    knobs = defaults(model)
    for knob in KNOBS:
        flag = knob.replace("_", "-")
        if flag not in given:
            continue
        if knob not in MODELS[model].knobs:
            users = [m for m, spec in MODELS.items() if knob in spec.knobs]
            hint = (f"it applies to: {', '.join(users)}" if users
                    else "no python model has it")
            if knob == "workers" and model.startswith("loop-"):
                hint = "Python runs one event loop per process: use --processes N, uvicorn's --workers"
            raise UsageError(f"--{flag} does not apply to model '{model}' ({hint})")
        knobs[knob] = _count(flag, given[flag], 1)
    s = Settings(model=model, knobs=knobs)
    if "port" in given:
        s.port = _count("port", given["port"], 0, 65535)
    if "metrics-port" in given:
        s.metrics_port = _count("metrics-port", given["metrics-port"], 0, 65535)
    if "warmup" in given:
        s.warmup = _count("warmup", given["warmup"], 0, MAX_WARMUP)
    if "pg-wait" in given:
        s.pg_wait_ms = _millis("pg-wait", given["pg-wait"])
    # Like `iolab serve`, backends come from the flags, else from the environment.
    http = given.get("http-backend", environ.get("IOLAB_HTTP_BACKEND", ""))
    pg = given.get("pg", environ.get("IOLAB_PG", ""))
    mc = given.get("mc", environ.get("IOLAB_MC", ""))
    s.http_backend = _http_url(http) if http else ""
    s.pg = _pg_url(pg) if pg else ""
    s.mc = _mc_addr(mc) if mc else ""
    return s
