"""The six Python models: which server runs each, which iolab knobs apply, and the defaults of
the real systems they stand for, computed from the cores this process may run on (its CPU
affinity, so a pinned target sizes itself like Python 3.13's os.process_cpu_count())."""

import os
from dataclasses import dataclass

KNOBS = ("threads", "max_connections", "backlog", "workers", "offload", "max_threads",
         "processes", "mc_pool", "pg_pool")


@dataclass(frozen=True)
class Model:
    name: str
    server: str          # "gunicorn" or "uvicorn"
    worker: str          # gunicorn worker class, or the asyncio runner's way of waiting
    knobs: tuple
    about: str


_POOLS = ("pg_pool", "mc_pool")

MODELS = {m.name: m for m in (
    Model("prefork", "gunicorn", "sync", ("processes", "backlog") + _POOLS,
          "gunicorn sync workers: N single-threaded processes, one request at a time each"),
    Model("pool", "gunicorn", "gthread",
          ("processes", "threads", "max_connections", "backlog") + _POOLS,
          "gunicorn gthread: a pool of OS threads per process, blocking clients, one GIL"),
    Model("virtual", "gunicorn", "gevent", ("processes", "max_connections", "backlog") + _POOLS,
          "gunicorn gevent workers: monkey-patched blocking calls on green threads"),
    Model("loop-blocking", "uvicorn", "blocking", ("processes", "backlog") + _POOLS,
          "uvicorn, async def handler calling time.sleep and blocking clients on the loop"),
    Model("loop-offload", "uvicorn", "offload", ("processes", "offload", "backlog") + _POOLS,
          "uvicorn, blocking calls through asyncio.to_thread on an executor of N threads"),
    Model("loop-async", "uvicorn", "async", ("processes", "backlog") + _POOLS,
          "uvicorn, asyncio.sleep, psycopg async pool, aiomcache, httpx.AsyncClient"),
)}

NAMES = ", ".join(MODELS)


def cores() -> int:
    return len(os.sched_getaffinity(0)) or 1


def defaults(model: str, n: int = 0) -> dict:
    """Every knob the model reads, as the real system would set it on `n` cores."""
    n = n or cores()
    d = {
        # gunicorn's docs suggest 2 x cores + 1 workers (its own default is 1); a process per
        # core and then some, so one blocked in IO leaves the CPU to another.
        "processes": 2 * n + 1 if model == "prefork" else 1,
        # gunicorn's docs: threads "generally in the 2-4 x $(NUM_CORES) range"; the top of it.
        "threads": 4 * n,
        "max_connections": 1000,   # gunicorn worker_connections
        "backlog": 2048,           # gunicorn and uvicorn --backlog
        "offload": min(32, n + 4), # ThreadPoolExecutor's default, asyncio's default executor
        "pg_pool": 10,             # HikariCP's, as every iolab runtime
        "mc_pool": 1,              # one connection, the E4 set-up
    }
    return {k: v for k, v in d.items() if k in MODELS[model].knobs}
