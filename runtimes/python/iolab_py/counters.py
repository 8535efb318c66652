"""The /metrics counters, shared by every process of one target through a small mmap'd file.

gunicorn and uvicorn serve from several processes, and a scrape may land on any of them (or on
the launcher's metrics listener), so each process keeps its numbers in its own row of the file
and a reader sums the rows. One writer per row needs no cross-process atomics: a per-process
lock orders that process's threads (or greenlets). Counters of a process that died stay in the
sum (totals never go back); its gauges (in flight, queued) are left out.

Row 0 is the header: the pids of the start script, the launcher and the server's main process,
which count as the target's processes too.
"""

import fcntl
import mmap
import os
import threading

SLOTS = 16  # int64 per row (128 bytes)
ROWS = 512
PID, IN_FLIGHT, QUEUED, COMPLETED, REJECTED = 0, 1, 2, 3, 4
CALLS = {"sleep": 5, "http": 6, "pg": 7, "mc": 8}
COUNTERS = (COMPLETED, REJECTED, *CALLS.values())
GAUGES = (IN_FLIGHT, QUEUED)
H_WRAPPER, H_LAUNCHER, H_SERVER = 1, 2, 3
SIZE = SLOTS * ROWS * 8
STATE_ENV = "IOLAB_PY_STATE"   # the file's path, set by the launcher for its servers


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


class Counters:
    def __init__(self, path=None):
        """Open the file at `path` (made by `create`), or private memory when there is none
        (a process outside any launcher, e.g. a unit test)."""
        self._fd = None
        if path:
            self._fd = os.open(path, os.O_RDWR)
            self._map = mmap.mmap(self._fd, SIZE)
        else:
            self._map = mmap.mmap(-1, SIZE)
        self._v = memoryview(self._map).cast("q")
        self._lock = threading.Lock()
        self._row = None
        os.register_at_fork(after_in_child=self._forget_row)

    @staticmethod
    def create(path: str, launcher_pid: int, wrapper_pid: int = 0) -> "Counters":
        with open(path, "wb") as f:
            f.truncate(SIZE)
        c = Counters(path)
        c._v[H_LAUNCHER] = launcher_pid
        c._v[H_WRAPPER] = wrapper_pid
        return c

    def _forget_row(self):
        # A forked child (a gunicorn worker) writes its own row, under its own lock.
        self._lock = threading.Lock()
        self._row = None

    def set_server_pid(self, pid: int):
        self._v[H_SERVER] = pid

    def register(self) -> int:
        """Claim this process's row: a free one, or a dead process's (its counters are kept,
        its gauges reset). Serialised across processes with a file lock."""
        if self._row is not None and self._v[self._row * SLOTS + PID] == os.getpid():
            return self._row
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            rows = range(1, ROWS)
            free = next((r for r in rows if self._v[r * SLOTS + PID] == 0), None)
            if free is None:
                free = next((r for r in rows if not alive(self._v[r * SLOTS + PID])), ROWS - 1)
            base = free * SLOTS
            for g in GAUGES:
                self._v[base + g] = 0
            self._v[base + PID] = os.getpid()
            self._row = free
        finally:
            if self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        return free

    def add(self, slot: int, n: int = 1):
        with self._lock:
            row = self._row if self._row is not None else self.register()
            self._v[row * SLOTS + slot] += n

    def call(self, kind: str):
        self.add(CALLS[kind])

    def snapshot(self) -> dict:
        """Sums over the rows, and the pids of the target's live processes."""
        total = {s: 0 for s in (*GAUGES, *COUNTERS)}
        header = (self._v[H_WRAPPER], self._v[H_LAUNCHER], self._v[H_SERVER])
        pids = [p for p in header if p and alive(p)]
        for r in range(1, ROWS):
            base = r * SLOTS
            pid = self._v[base + PID]
            if pid == 0:
                break  # rows are claimed lowest first and never freed: the rest are unused
            for s in COUNTERS:
                total[s] += self._v[base + s]
            if alive(pid):
                for g in GAUGES:
                    total[g] += self._v[base + g]
                if pid not in pids:
                    pids.append(pid)
        total["pids"] = pids
        return total

    def zero(self):
        """Zero the counters of every row (after the warm-up, with nothing in flight)."""
        for r in range(1, ROWS):
            for s in COUNTERS:
                self._v[r * SLOTS + s] = 0

    def workers(self) -> int:
        """Live processes that registered a row (the ones serving requests)."""
        pids = (self._v[r * SLOTS + PID] for r in range(1, ROWS))
        return sum(1 for pid in pids if pid and alive(pid))


_shared = None


def shared() -> Counters:
    """This process's one Counters (one row, one lock), on the launcher's file."""
    global _shared
    if _shared is None:
        _shared = Counters(os.environ.get(STATE_ENV))
    return _shared
