"""The command line of the real server for a model: gunicorn with the model's worker class,
or uvicorn, each serving the launcher's listening socket (fd://N / --fd N, as under systemd
socket activation), so port 0 works and the launcher knows the port before the server starts.

Settings that would distort the lab are changed, and said so:
- gunicorn --timeout 0: its watchdog kills a sync worker busy for 30 s, but a step may last
  an hour; a killed worker would measure the watchdog, not the model.
- --graceful-timeout / --timeout-graceful-shutdown 2: SIGTERM must end the target in 10 s.
- --no-control-socket: gunicorn 25+ opens ~/.gunicorn/gunicorn.ctl, which parallel targets
  would fight over.
- uvicorn --http iolab_py.nodelay:HttpToolsNoDelay: its own httptools protocol with TCP_NODELAY,
  which `--fd` loses (see nodelay.py): without it every answer waited ~40 ms for a delayed ACK.
- uvicorn --ws websockets-sansio: GET /ws on the `websockets` library (held.py), named rather
  than left to `auto`, which would pick uvicorn's deprecated implementation.
Everything else is the servers' defaults (keep-alive: gunicorn 2 s, uvicorn 5 s)."""

import sys

from .models import MODELS

_WORKERS = {"sync": "sync", "gthread": "iolab_py.gthread_worker.CountingThreadWorker",
            "gevent": "gevent"}


def command(settings, fd: int) -> list:
    model = MODELS[settings.model]
    k = settings.knobs
    if model.server == "gunicorn":
        argv = [sys.executable, "-m", "gunicorn", "--bind", f"fd://{fd}",
                "--backlog", str(k["backlog"]), "--workers", str(k["processes"]),
                "--worker-class", _WORKERS[model.worker],
                "--timeout", "0", "--graceful-timeout", "2", "--no-control-socket",
                "--log-level", "warning", "--error-logfile", "-"]
        if model.worker == "gthread":
            argv += ["--threads", str(k["threads"])]
        if "max_connections" in k:
            argv += ["--worker-connections", str(k["max_connections"])]
        return argv + ["iolab_py.wsgi:app"]
    return [sys.executable, "-m", "uvicorn", "iolab_py.asgi:app", "--fd", str(fd),
            "--http", "iolab_py.nodelay:HttpToolsNoDelay", "--ws", "websockets-sansio",
            "--backlog", str(k["backlog"]), "--workers", str(k["processes"]),
            "--lifespan", "off", "--no-access-log", "--log-level", "warning",
            "--timeout-graceful-shutdown", "2"]
