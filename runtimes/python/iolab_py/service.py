"""One server process's share of the contract, whatever speaks HTTP for it: settings, the
shared counters (this process's row), the backends, and the answers to every path but the
running of /work itself, which is the model's (wsgi.py, asgi.py)."""

import sys
import time
import traceback

from . import answers, metrics, route
from .answers import JSON, OCTET_STREAM, PROMETHEUS, WorkError
from .backends import Backends
from .counters import COMPLETED, IN_FLIGHT, shared
from .settings import Settings
from .steps import leaf_count


class Service:
    def __init__(self, settings: Settings = None):
        self.settings = settings or Settings.from_env()
        self.model = self.settings.model
        self.counters = shared()
        # Claimed now, at app load in each worker: the launcher waits for every process's row
        # before it says the target is ready.
        self.counters.register()
        self.backends = Backends(self.settings, self.counters)

    def answer(self, method: str, path: str):
        """(status, content type, body) for any path but /work; None for /work."""
        if method not in ("GET", "HEAD"):
            return 405, JSON, answers.method_not_allowed(method)
        if path == "/work":
            return None
        if path == "/health":
            return 200, JSON, answers.health(self.model)
        if path == "/metrics":
            return 200, PROMETHEUS, metrics.render(self.counters)
        return 404, JSON, answers.not_found(path)

    def begin(self) -> float:
        """Start one /work: count it in flight; its start time."""
        self.counters.add(IN_FLIGHT)
        return time.perf_counter()

    def plan(self, query: str):
        return route.plan(query, self.backends.configured, self.counters.call)

    def end(self, work, started: float, outcome):
        """The answer to a finished /work; `outcome` is the value fetched or an exception.
        Counted before it is written, so a client that reads /metrics after its answer
        always sees it (as the Rust targets do)."""
        try:
            if isinstance(outcome, WorkError):
                return outcome.status, JSON, answers.error(outcome.message)
            if isinstance(outcome, BaseException):
                traceback.print_exception(outcome, file=sys.stderr)
                return 500, JSON, answers.error(f"internal error: {type(outcome).__name__}: {outcome}")
            if work.value:
                return 200, OCTET_STREAM, outcome
            return 200, JSON, answers.ok(self.model, leaf_count(work.step),
                                         time.perf_counter() - started)
        finally:
            self.counters.add(IN_FLIGHT, -1)
            self.counters.add(COMPLETED)
