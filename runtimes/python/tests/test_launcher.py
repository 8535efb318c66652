"""The launcher protocol: usage errors, warm-up, the separate metrics listener, counters summed
over processes, and stopping (SIGTERM with work in flight; the launcher killed outright)."""

import os
import signal
import subprocess
import threading
import time

import pytest

from conftest import HERE, Target, backend_env, descendants, get, metrics


@pytest.mark.parametrize("args, says", [
    (["--model", "sequential"], "unknown model 'sequential'"),
    ([], "--model is required"),
    (["--model", "pool", "--nope", "1"], "unknown flag '--nope'"),
    (["--model", "prefork", "--threads", "4"], "--threads does not apply to model 'prefork'"),
    (["--model", "loop-async", "--workers", "2"], "use --processes N"),
    (["--model", "pool", "--max-threads", "9"], "--max-threads does not apply"),
    (["--model", "pool", "--threads", "0"], "--threads must be a whole number"),
    (["--model", "pool", "--port"], "--port needs a value"),
    (["--model", "pool", "--mc", "nohost"], "--mc 'nohost' is not HOST:PORT"),
    (["--model", "pool", "--pg", "mysql://x"], "is not a PostgreSQL URL"),
    (["--model", "pool", "--http-backend", "ftp://x"], "is not an http://HOST:PORT URL"),
])
def test_usage_errors_exit_2_with_one_line(args, says):
    r = subprocess.run([str(HERE / "start"), *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], r.stderr


def in_background(url, paths):
    """Requests on threads of their own; a connection the target closes is no test failure."""
    def one(path):
        try:
            get(url, path)
        except OSError:
            pass

    threads = [threading.Thread(target=one, args=(p,)) for p in paths]
    for t in threads:
        t.start()
    return threads


def test_warmup_leaves_zeroed_counters(targets):
    t = targets("pool", "--warmup", "100", backends=False)
    m = metrics(t.url)
    assert m["iolab_requests_completed_total"] == 0
    assert m['iolab_backend_calls_total{kind="sleep"}'] == 0


def test_metrics_port_answers_while_the_loop_is_blocked(targets):
    t = targets("loop-blocking", "--metrics-port", "0", backends=False)
    busy = in_background(t.url, ["/work?steps=sleep:1500"])
    assert eventually(lambda: metrics(t.metrics_url)["iolab_requests_in_flight"] == 1, 0.8)
    a = get(t.metrics_url, "/metrics")
    assert a.status == 200 and a.ms < 500, f"{a.ms:.0f} ms"
    # The server's own /metrics waits for the blocked loop.
    assert get(t.url, "/metrics").ms > 400
    for th in busy:
        th.join()


def test_counters_are_summed_over_processes(targets):
    t = targets("prefork", "--processes", "3", "--metrics-port", "0", backends=False)
    before = metrics(t.metrics_url)["iolab_requests_completed_total"]
    busy = in_background(t.url, ["/work?steps=sleep:1000"] * 3)
    assert eventually(lambda: metrics(t.metrics_url)["iolab_requests_in_flight"] == 3, 0.9)
    m = metrics(t.metrics_url)
    assert m["iolab_processes"] == 6  # start script, launcher, gunicorn master, 3 workers
    assert m["iolab_threads"] >= 5
    for th in busy:
        th.join()
    assert metrics(t.metrics_url)["iolab_requests_completed_total"] == before + 3


@pytest.mark.parametrize("model, flags", [("pool", ["--threads", "1"]),
                                          ("loop-offload", ["--offload", "1"])])
def test_queued_counts_what_waits_for_a_thread(targets, model, flags):
    t = targets(model, *flags, "--metrics-port", "0", backends=False)
    busy = in_background(t.url, ["/work?steps=sleep:2000"] * 3)
    # One runs, two wait (for the first 2 s); polled, as a loaded machine may be slow to send.
    queued = lambda: metrics(t.metrics_url)["iolab_requests_queued"]  # noqa: E731
    assert eventually(lambda: queued() == 2, 1.8), f"queued {queued()}, not 2\n{t.log()}"
    for th in busy:
        th.join()
    # A closed keep-alive connection is queued too, for the read that finds it closed: 0 soon.
    assert eventually(lambda: queued() == 0, 3), f"queued {queued()} when idle\n{t.log()}"


def eventually(check, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_sigterm_with_work_in_flight_exits_0_within_10_s():
    t = Target("loop-async", [], backend_env(False))
    busy = in_background(t.url, ["/work?steps=sleep:20000"])
    time.sleep(0.3)
    code, took = t.stop()
    assert code == 0 and took < 10, (code, took, t.log())
    for th in busy:
        th.join()


def test_everything_stops_when_the_start_script_is_killed():
    """SIGKILL, which nothing can catch: the kernel's parent-death signal passes a SIGTERM down
    (start script -> launcher -> server), and every process goes within 10 s."""
    t = Target("pool", [], backend_env(False))
    family = descendants(t.proc.pid)
    assert len(family) >= 3, family  # launcher, gunicorn master, worker
    t.proc.send_signal(signal.SIGKILL)
    t.proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in family):
        time.sleep(0.1)
    left = [p for p in family if os.path.exists(f"/proc/{p}")]
    assert not left, f"outlived the start script: {left}"
