"""The launcher (runtimes/README.md, "The launcher protocol"): flags in, one server started,
the URL out once it serves, SIGTERM forwarded.

It is a small supervisor around the real server: it binds the listening socket (so `--port 0`
works and the port is known before the server starts), makes the shared counters file, starts
gunicorn or uvicorn in a session of its own on that socket, waits until /health answers and
every worker process has registered, sends the warm-up, zeroes the counters, then prints the
URL (and the metrics listener's, which it serves itself). On SIGTERM or SIGINT it passes
SIGTERM on, waits for a graceful stop, kills whatever is left of the session, and exits 0.
"""

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from . import metrics_server, warmup
from .counters import STATE_ENV, Counters
from .models import MODELS, NAMES, defaults
from .server_cmd import command
from .settings import ENV, Settings, UsageError, parse

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
READY_S = 55       # under the manifest's start_timeout_s
STOP_S = 8         # graceful stop, then SIGKILL: all gone well within 10 s
USAGE = f"""usage: runtimes/python/start --model MODEL [--port P] [--KNOB N ...] [--http-backend URL]
       [--pg URL] [--mc HOST:PORT] [--pg-wait MS] [--warmup N] [--metrics-port P]

models: {NAMES}
knobs (those the model has; defaults on this machine in brackets):
""" + "\n".join(f"  {m}: " + ", ".join(f"--{k.replace('_', '-')} [{v}]"
                                        for k, v in defaults(m).items()) for m in MODELS) + """
backends: flags, else IOLAB_HTTP_BACKEND, IOLAB_PG, IOLAB_MC.
stdout: line 1 the URL once it serves; line 2 `metrics URL` with --metrics-port.
"""


def log(msg: str):
    print(f"python target: {msg}", file=sys.stderr, flush=True)


def _die_with_parent():
    # SIGTERM when the parent dies (prctl PR_SET_PDEATHSIG): the server when the launcher is
    # killed outright, the launcher when the start script is.
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def _listen(settings: Settings) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", settings.port))
    s.listen(settings.knobs["backlog"])
    s.set_inheritable(True)
    return s


class Launcher:
    def __init__(self, settings: Settings):
        self.settings = settings
        # A plain flag: the handler runs between two bytecodes of the main thread, which may
        # hold a threading.Event's lock just then, so Event.set() there can deadlock.
        self.stopping = False
        self.child = None

    def run(self) -> int:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_signal)
        state = tempfile.mkdtemp(prefix="iolab-py-")
        try:
            return self._run(os.path.join(state, "counters"))
        finally:
            self._halt()
            shutil.rmtree(state, ignore_errors=True)

    def _run(self, path: str) -> int:
        s = self.settings
        wrapper = int(os.environ.pop("IOLAB_PY_WRAPPER", "0") or 0)
        counters = Counters.create(path, os.getpid(), wrapper if wrapper == os.getppid() else 0)
        try:
            listener = _listen(s)
            metrics = metrics_server.start(s.metrics_port, counters) if s.metrics_port >= 0 else None
        except OSError as e:
            log(f"cannot listen on 127.0.0.1: {e} (pick another --port / --metrics-port, or 0)")
            return 1
        port = listener.getsockname()[1]
        env = dict(os.environ, **{ENV: s.to_env(), STATE_ENV: path, "PYTHONPATH": HERE,
                                  "PYTHONUNBUFFERED": "1"})
        argv = command(s, listener.fileno())
        log(f"{s.model}: {' '.join(argv[1:])}")
        self.child = subprocess.Popen(argv, pass_fds=[listener.fileno()], cwd=HERE, env=env,
                                      stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno(),
                                      start_new_session=True, preexec_fn=_die_with_parent)
        listener.close()  # the server has its copy
        counters.set_server_pid(self.child.pid)
        if not self._wait_ready(port, counters):
            return 0 if self.stopping else 1
        if s.warmup:
            warmup.run(port, s.warmup)
            counters.zero()
        if self.stopping:
            return 0
        if metrics:
            metrics_server.serve(metrics)
        print(f"http://127.0.0.1:{port}", flush=True)
        if metrics:
            print(f"metrics http://127.0.0.1:{metrics.server_address[1]}", flush=True)
        while not self.stopping:
            time.sleep(0.2)
            if self.child.poll() is not None and not self.stopping:
                log(f"the server exited with code {self.child.returncode} (its log is above)")
                return 1
        return 0

    def _on_signal(self, *_):
        self.stopping = True

    def _wait_ready(self, port: int, counters: Counters) -> bool:
        """/health answers 200 and every worker process has its counters row."""
        want = self.settings.knobs["processes"]
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline and not self.stopping:
            if self.child.poll() is not None:
                log(f"the server exited with code {self.child.returncode} before it was ready "
                    "(its log is above)")
                return False
            try:
                if warmup.get(port, "/health", 2.0)[0] == 200 and counters.workers() >= want:
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        if not self.stopping:
            log(f"the server did not become ready within {READY_S} s")
        return False

    def _halt(self):
        """SIGTERM to the server, a graceful wait, then SIGKILL to its whole session."""
        if self.child is None:
            return
        if self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)
            try:
                self.child.wait(STOP_S)
            except subprocess.TimeoutExpired:
                log(f"the server did not stop within {STOP_S} s of SIGTERM: killing it")
        try:
            os.killpg(self.child.pid, signal.SIGKILL)  # stragglers of its session, if any
        except (ProcessLookupError, PermissionError):
            pass
        self.child.wait()


def main(argv=None) -> int:
    _die_with_parent()  # the start script killed outright: stop too (SIGTERM, handled below)
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0
    try:
        settings = parse(argv)
    except UsageError as e:
        log(str(e))
        return 2
    return Launcher(settings).run()


if __name__ == "__main__":
    sys.exit(main())
