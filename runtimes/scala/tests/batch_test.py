#!/usr/bin/env python3
"""The Scala runtime's batch checks, through its launcher (./start --spec FILE.json).

Each check runs a real batch (real threads, real sleeps, real Akka actors) and reads the
iolab.batch/1 document it prints: exact field names and types, task counts, and each model's
way of waiting by its total time, T(n) = ceil(n/P) x S, within generous margins (the machine
is shared). Bad input must give one line on stderr and exit 2; SIGTERM must stop a batch
with exit 0 and a document that counts the tasks it skipped.
"""
import atexit
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START = os.path.join(HERE, "start")
CORES = os.cpu_count() or 1
TMP = tempfile.mkdtemp(prefix="iolab-scala-test-")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)

RESULT_KEYS = {"model", "params", "tasks", "failed", "total_s", "by_type", "peak_threads",
               "peak_rss_mb", "cpu_utilisation"}
OPTIONAL_KEYS = {"failure", "counters"}
STATS_KEYS = {"count", "mean_ms", "p99_ms", "wait_mean_ms", "service_mean_ms", "wait_p99_ms",
              "service_p99_ms"}

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}")


def spec_file(doc):
    fd, path = tempfile.mkstemp(suffix=".json", dir=TMP)
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f)
    return path


def run(doc, timeout=120):
    """Run one batch; returns (rc, parsed document or None, stderr)."""
    p = subprocess.run([START, "--spec", spec_file(doc)], capture_output=True, text=True,
                       timeout=timeout)
    try:
        parsed = json.loads(p.stdout) if p.returncode == 0 else None
    except json.JSONDecodeError:
        parsed = None
    return p.returncode, parsed, p.stderr


def schema_ok(doc):
    """The document has exactly BatchFile/BatchResult's fields, integers where serde wants u64."""
    if not doc or doc.get("schema") != "iolab.batch/1" or set(doc) != {"schema", "runs"}:
        return False, "schema/runs"
    for r in doc["runs"]:
        keys = set(r)
        if not RESULT_KEYS <= keys or keys - RESULT_KEYS - OPTIONAL_KEYS:
            return False, f"result keys {sorted(keys)}"
        for k in ("tasks", "failed", "peak_threads"):
            if not isinstance(r[k], int) or r[k] < 0:
                return False, f"{k} is not a u64: {r[k]!r}"
        for k in ("total_s", "peak_rss_mb", "cpu_utilisation"):
            if not isinstance(r[k], (int, float)):
                return False, f"{k} is not a number"
        for ty, s in r["by_type"].items():
            if ty not in ("cpu", "io") or set(s) != STATS_KEYS or not isinstance(s["count"], int):
                return False, f"by_type.{ty}: {sorted(s)}"
        if not all(isinstance(v, (int, float)) for v in r.get("counters", {}).values()):
            return False, "counters must be numbers"
        if r["model"] is not None and not isinstance(r["model"], str):
            return False, "model"
    return True, ""


def calls(n, ms, model, **knobs):
    return {"spec": {"tasks": {"kind": "calls", "n": n, "ms": ms}, "seed": 1},
            "executor": {"model": model, "params": knobs}}


def e3(label, doc, lo_ms, hi_ms, extra=None):
    """One E3 executor: schema, all tasks done, total time in [lo, hi] ms."""
    rc, out, err = run(doc)
    if rc != 0 or out is None:
        check(f"E3 {label}: runs", False, f"rc={rc} {err.strip()[-300:]}")
        return None
    ok, why = schema_ok(out)
    check(f"E3 {label}: document has iolab's field names", ok, why)
    r = out["runs"][0]
    n = doc["spec"]["tasks"]["n"]
    check(f"E3 {label}: {n} tasks done, none failed",
          r["tasks"] == n and r["failed"] == 0 and r["by_type"]["io"]["count"] == n, str(r))
    total = r["total_s"] * 1000
    check(f"E3 {label}: total {total:.0f} ms within [{lo_ms:.0f}, {hi_ms:.0f}]",
          lo_ms <= total <= hi_ms, json.dumps(r.get("counters")))
    if extra:
        name, ok = extra(r)
        check(f"E3 {label}: {name}", ok, json.dumps(r))
    return r


def e3_checks():
    n, s = 16, 50.0
    slack = lambda t: t * 1.6 + 250  # a busy 2-core machine stretches, never shrinks, a sleep
    e3("sequential, T = n x S", calls(n, s, "sequential"), 0.95 * n * s, slack(n * s))
    e3("pool threads=4 (fixed pool), T = ceil(n/4) x S", calls(n, s, "pool", threads=4),
       0.95 * math.ceil(n / 4) * s, slack(math.ceil(n / 4) * s),
       lambda r: ("4 threads ran the tasks, 4 calls at most in flight",
                  r["counters"]["threads_used"] == 4 and r["counters"]["peak_io_in_service"] == 4))
    p = CORES
    e3(f"pool (global EC, P = cores = {p}), T = ceil(n/P) x S", calls(n, s, "pool"),
       0.95 * math.ceil(n / p) * s, slack(math.ceil(n / p) * s),
       lambda r: ("the global EC's parallelism is the core count",
                  r["counters"]["parallelism"] == p and r["params"]["threads"] == p))
    e3("thread-per-request (global + blocking{}), T about S", calls(n, s, "thread-per-request"),
       0.95 * s, 3 * s + 200,
       lambda r: ("every call had a thread at once (ForkJoinPool compensation)",
                  r["counters"]["peak_io_in_service"] == n
                  and r["counters"]["peak_pool_threads"] >= n
                  and r["counters"]["max_extra_threads"] == 256))
    cap = p + 4
    e3(f"thread-per-request max_threads={cap} (maxExtraThreads 4), T = ceil(n/{cap}) x S",
       calls(n, s, "thread-per-request", max_threads=cap),
       0.95 * math.ceil(n / cap) * s, slack(math.ceil(n / cap) * s),
       lambda r: (f"at most {cap} calls in flight", r["counters"]["peak_io_in_service"] <= cap
                  and r["params"]["max_threads"] == cap))
    e3("loop-async (scheduled promise, workers=2), T about S", calls(n, s, "loop-async", workers=2),
       0.95 * s, 3 * s + 200,
       lambda r: ("all calls waited at once, on no more than the 2 pool threads",
                  r["counters"]["peak_io_in_service"] == n and r["counters"]["threads_used"] <= 2))


def e1(worker, workers=2):
    doc = {"spec": {"tasks": {"kind": "mixed", "cpu": 8, "io": 8, "cpu_terms": [100000, 200000],
                              "io_ms": [80, 100, 120]},
                    "master": {"workers": workers, "worker": worker}, "seed": 3}}
    rc, out, err = run(doc)
    if rc != 0 or out is None:
        check(f"E1 {worker}: runs", False, f"rc={rc} {err.strip()[-300:]}")
        return None
    ok, why = schema_ok(out)
    check(f"E1 {worker}: document has iolab's field names", ok, why)
    r = out["runs"][0]
    bt = r["by_type"]
    check(f"E1 {worker}: 8 CPU + 8 IO tasks done, none failed",
          r["tasks"] == 16 and r["failed"] == 0 and bt["cpu"]["count"] == 8
          and bt["io"]["count"] == 8, json.dumps(r))
    d = min(max(3 * CORES, 8), 64)
    check(f"E1 {worker}: Akka's dispatcher sized ceil(3 x cores) in [8, 64] = {d}",
          r["params"]["dispatcher_threads"] == d and r["params"]["workers"] == workers
          and r["params"]["worker"] == worker, json.dumps(r["params"]))
    return r


def e1_checks():
    res = {w: e1(w) for w in ("blocking", "shared-pool", "timer")}
    if all(res.values()):
        b, sp, t = (res[w]["total_s"] for w in ("blocking", "shared-pool", "timer"))
        # Blocking: 2 workers hold the 8 sleeps (80-120 ms), two at a time, so the batch takes
        # at least half their sum. Timer and shared-pool (8 dispatcher threads): the sleeps
        # overlap, about 100-200 ms.
        io = res["blocking"]["by_type"]["io"]
        floor = io["count"] * io["service_mean_ms"] / 2 / 1000
        check(f"E1: blocking ({b:.3f} s) takes at least half its sleeps ({floor:.3f} s)",
              b >= 0.95 * floor, "")
        check(f"E1: timer ({t:.3f} s) beats blocking ({b:.3f} s)", t < b, "")
        check(f"E1: shared-pool ({sp:.3f} s) beats blocking ({b:.3f} s) with 8 dispatcher threads",
              sp < b, "")
        check("E1: blocking workers never had more than W = 2 sleeps in flight",
              res["blocking"]["counters"]["peak_io_in_service"] <= 2, "")
    # The article's flaw: shared-pool sleeps hold dispatcher threads, so with D pinned to 2
    # there is no more IO in flight than the dispatcher has threads.
    doc = {"spec": {"tasks": {"kind": "calls", "n": 8, "ms": 100},
                    "master": {"workers": 4, "worker": "shared-pool", "shared_pool": 2}, "seed": 1}}
    rc, out, err = run(doc)
    r = out["runs"][0] if out else {}
    check("E1 shared-pool with shared_pool=2: IO capped by the 2 dispatcher threads (>= 400 ms)",
          rc == 0 and r.get("counters", {}).get("peak_io_in_service", 99) <= 2
          and r["total_s"] >= 0.38 and r["params"]["shared_pool"] == 2, f"rc={rc} {err[-300:]} {r}")


def refusals():
    cases = [
        ("an unknown model", calls(1, 1, "virtual")),
        ("a knob that does not apply", calls(1, 1, "sequential", threads=4)),
        ("an unknown knob", calls(1, 1, "pool", thread=4)),
        ("io_backend pg", {"spec": {"tasks": {"kind": "calls", "n": 1, "ms": 1}, "seed": 1,
                                    "io_backend": "pg"}, "executor": {"model": "pool", "params": {}}}),
        ("no executor and no master", {"spec": {"tasks": {"kind": "calls", "n": 1, "ms": 1}, "seed": 1}}),
        ("an unknown worker", {"spec": {"tasks": {"kind": "calls", "n": 1, "ms": 1}, "seed": 1,
                                        "master": {"workers": 2, "worker": "actor"}}}),
        ("a negative seed", {"spec": {"tasks": {"kind": "calls", "n": 1, "ms": 1}, "seed": -1},
                             "executor": {"model": "sequential", "params": {}}}),
    ]
    for name, doc in cases:
        rc, out, err = run(doc)
        lines = [l for l in err.splitlines() if l.strip()]
        check(f"refuses {name}: exit 2, one line", rc == 2 and len(lines) == 1, f"rc={rc} {err!r}")
    p = subprocess.run([START, "--spec", os.path.join(TMP, "missing.json")], capture_output=True, text=True)
    check("refuses a missing file: exit 2", p.returncode == 2, p.stderr)
    p = subprocess.run([START, "--bogus"], capture_output=True, text=True)
    check("refuses bad flags: exit 2", p.returncode == 2, p.stderr)


def sigterm():
    # 100 calls of 50 ms one after another (5 s); SIGTERM about 1 s into the batch.
    proc = subprocess.Popen([START, "--spec", spec_file(calls(100, 50, "sequential"))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stderr.readline()  # "batch: 100 tasks, sequential" once it is about to start
    time.sleep(1.0)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=15)
    err = first + err
    took = time.monotonic() - t0
    doc = json.loads(out) if out.strip() else None
    r = doc["runs"][0] if doc else {}
    check(f"SIGTERM: exit 0 within 10 s ({took:.1f} s)", proc.returncode == 0 and took < 10,
          f"rc={proc.returncode} {err[-300:]}")
    check("SIGTERM: the document counts the skipped tasks",
          doc is not None and r.get("counters", {}).get("skipped", 0) > 0
          and "cancelled" in r.get("failure", ""), out[-400:])


def main():
    t0 = time.monotonic()
    refusals()
    e3_checks()
    e1_checks()
    sigterm()
    print(f"batch checks took {time.monotonic() - t0:.0f} s")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
