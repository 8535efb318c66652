"""Shared test machinery: targets started exactly as iolab starts them (./start --port 0, URL
on stdout line 1), kept running across tests and stopped with SIGTERM at the end; the real
backends from scripts/services (IOLAB_PG, IOLAB_MC, IOLAB_HTTP_BACKEND); a tiny HTTP client."""

import http.client
import json
import os
import pathlib
import signal
import subprocess
import threading
import time
import tomllib

import pytest

HERE = pathlib.Path(__file__).resolve().parent.parent
REPO = HERE.parent.parent
VECTORS = REPO / "vectors"
# The models runtime.toml declares, in its order: the one list, read where iolab reads it.
MODELS = list(tomllib.loads((HERE / "runtime.toml").read_text())["models"])
BACKEND_ENV = ("IOLAB_PG", "IOLAB_MC", "IOLAB_HTTP_BACKEND")


def vectors(name: str) -> dict:
    return json.loads((VECTORS / name).read_text())


class Answer:
    def __init__(self, status, headers, body, elapsed):
        self.status, self.headers, self.body, self.elapsed = status, headers, body, elapsed

    @property
    def ms(self) -> float:
        return self.elapsed * 1000

    def json(self):
        return json.loads(self.body)


def get(base: str, path: str, timeout: float = 30.0) -> Answer:
    """One GET on a fresh connection, timed from send to the last body byte."""
    host, port = base.removeprefix("http://").split(":")
    c = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        t0 = time.perf_counter()
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        return Answer(r.status, {k.lower(): v for k, v in r.getheaders()}, body,
                      time.perf_counter() - t0)
    finally:
        c.close()


def together(base: str, paths) -> tuple:
    """Send every path at once, one connection each: (wall seconds, answers in order)."""
    out = [None] * len(paths)
    start = threading.Barrier(len(paths) + 1)

    def one(i):
        start.wait()
        out[i] = get(base, paths[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(paths))]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - t0, out


def children_of(pid: int) -> list:
    """Pids whose parent is `pid` (from /proc/*/stat)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return sorted(out)


def descendants(pid: int) -> list:
    """Children, grandchildren, ... of `pid`, breadth first."""
    out, level = [], [pid]
    while level:
        level = [c for p in level for c in children_of(p)]
        out += level
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metrics(base: str) -> dict:
    """The /metrics samples as {series: value}."""
    samples = {}
    for line in get(base, "/metrics").body.decode().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


class Target:
    """One launcher process. `url` (and `metrics_url` with --metrics-port) once it serves."""

    def __init__(self, model, flags=(), env=None):
        self.model = model
        want_metrics = "--metrics-port" in flags
        self.proc = subprocess.Popen(
            [str(HERE / "start"), "--model", model, "--port", "0", *flags],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.stderr = []
        threading.Thread(target=self._drain, daemon=True).start()
        self.url = self._line(60)
        assert self.url and self.url.startswith("http://127.0.0.1:"), \
            f"{model}: no URL on stdout line 1 (got {self.url!r}); stderr:\n{self.log()}"
        self.metrics_url = None
        if want_metrics:
            line = self._line(10)
            assert line.startswith("metrics http://127.0.0.1:"), line
            self.metrics_url = line.split(" ", 1)[1]

    def _drain(self):
        for line in self.proc.stderr:
            self.stderr.append(line)

    def _line(self, timeout):
        box = []
        t = threading.Thread(target=lambda: box.append(self.proc.stdout.readline().strip()),
                             daemon=True)
        t.start()
        t.join(timeout)
        return box[0] if box else ""

    def log(self) -> str:
        return "".join(self.stderr[-30:])

    def get(self, path, timeout=30.0) -> Answer:
        return get(self.url, path, timeout)

    def stop(self) -> tuple:
        """SIGTERM; (exit code, seconds to exit). Killed (code None) after 15 s."""
        t0 = time.perf_counter()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        return code, time.perf_counter() - t0


def backend_env(with_backends: bool) -> dict:
    env = dict(os.environ)
    if not with_backends:
        for k in BACKEND_ENV:
            env.pop(k, None)
    return env


class Targets:
    """Targets by (model, flags, backends), started on first use and reused."""

    def __init__(self):
        self.running = {}

    def __call__(self, model, *flags, backends=True) -> Target:
        key = (model, flags, backends)
        t = self.running.get(key)
        if t is None or t.proc.poll() is not None:
            t = self.running[key] = Target(model, flags, backend_env(backends))
        return t

    def stop(self, target: Target) -> tuple:
        self.running = {k: v for k, v in self.running.items() if v is not target}
        return target.stop()

    def stop_all(self):
        """All at once: each takes a second or two to stop gracefully."""
        running, self.running = list(self.running.values()), {}
        stoppers = [threading.Thread(target=t.stop) for t in running]
        for s in stoppers:
            s.start()
        for s in stoppers:
            s.join()


@pytest.fixture(scope="session")
def targets():
    pool = Targets()
    yield pool
    pool.stop_all()


@pytest.fixture(scope="session")
def backends() -> dict:
    """The real backends; missing ones skip the test, or fail it with
    IOLAB_REQUIRE_BACKENDS=1 (the project's test command sets it with the services up)."""
    found = {k: os.environ.get(k, "") for k in BACKEND_ENV}
    missing = [k for k, v in found.items() if not v]
    if missing:
        msg = f"backends not set: {', '.join(missing)} (start them: eval \"$(scripts/services up)\")"
        if os.environ.get("IOLAB_REQUIRE_BACKENDS") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return found


@pytest.fixture(scope="session")
def iolab_bin() -> str:
    path = os.environ.get("IOLAB_BIN", "")
    if not path or not os.access(path, os.X_OK):
        msg = f"IOLAB_BIN is not an iolab binary ({path!r})"
        if os.environ.get("IOLAB_REQUIRE_BACKENDS") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return path
