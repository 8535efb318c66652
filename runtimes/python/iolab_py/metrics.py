"""/metrics as Prometheus text (format 0.0.4), with the Rust targets' names
(crates/servers/src/metrics.rs), summed over every process of the target."""

import os

from .counters import COMPLETED, IN_FLIGHT, QUEUED, REJECTED, CALLS, Counters


def threads_of(pid: int) -> int:
    """Live OS threads of one process (its /proc/PID/task entries; 0 if it is gone)."""
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def render(counters: Counters) -> bytes:
    snap = counters.snapshot()
    out = []

    def metric(name, kind, help_text, value):
        out.append(f"# HELP {name} {help_text}\n# TYPE {name} {kind}\n{name} {value}\n")

    metric("iolab_requests_in_flight", "gauge", "/work requests executing now.",
           max(snap[IN_FLIGHT], 0))
    metric("iolab_requests_queued", "gauge",
           "Requests (pool: gthread's executor queue) or offload jobs (loop-offload) "
           "waiting for a thread.", max(snap[QUEUED], 0))
    metric("iolab_requests_completed_total", "counter",
           "/work requests answered, whatever the status, except overload rejections.",
           snap[COMPLETED])
    metric("iolab_requests_rejected_total", "counter",
           "Requests refused with 503 because no thread could be had.", snap[REJECTED])
    metric("iolab_threads", "gauge",
           "Live OS threads of the target's processes (launcher, server, workers).",
           sum(threads_of(p) for p in snap["pids"]))
    metric("iolab_processes", "gauge",
           "Live processes of the target (launcher, server, workers).", len(snap["pids"]))
    out.append("# HELP iolab_backend_calls_total Backend calls made, by kind.\n"
               "# TYPE iolab_backend_calls_total counter\n")
    for kind, slot in CALLS.items():
        out.append(f'iolab_backend_calls_total{{kind="{kind}"}} {snap[slot]}\n')
    return "".join(out).encode()
