"""Each model's way of waiting, with real timing and generous margins (the machine is shared):
how many 300 ms sleeps overlap, whether par(...) overlaps, and the GIL: threads of one process
take turns at pure-Python CPU work while their sleeps overlap."""

from conftest import cpu_seconds, descendants, together

S = 300  # ms of each sleep


def sleeps(n, ms=S):
    return [f"/work?steps=sleep:{ms}"] * n


def assert_all_ok(answers):
    assert all(a.status == 200 for a in answers), [a.body[:100] for a in answers]


def test_prefork_serves_one_request_per_process(targets):
    t = targets("prefork", "--processes", "2")
    wall, answers = together(t.url, sleeps(4))
    assert_all_ok(answers)
    assert 0.54 <= wall < 1.2, f"2 processes x 4 sleeps of {S} ms took {wall:.3f} s (want ~0.6)"
    # A single-threaded process runs par(...) children one after another.
    a = t.get(f"/work?steps=par(sleep:{S},sleep:{S})")
    assert a.status == 200 and a.ms >= 2 * S - 10, f"{a.ms:.0f} ms"


def test_pool_of_4_threads_serves_8_sleeps_in_two_rounds(targets):
    t = targets("pool", "--threads", "4")
    wall, answers = together(t.url, sleeps(8))
    assert_all_ok(answers)
    assert 0.54 <= wall < 1.2, f"4 threads x 8 sleeps of {S} ms took {wall:.3f} s (want ~0.6)"
    a = t.get(f"/work?steps=par(sleep:{S},sleep:{S},sleep:{S})")
    assert a.status == 200 and a.ms < 2 * S - 50, f"par did not overlap: {a.ms:.0f} ms"


def test_pool_threads_share_one_gil(targets):
    """4 concurrent cpu:N on 4 threads of one process take about 4x one alone (on 2 cores
    parallel threads would take about 2x), while 4 concurrent sleeps overlap. Judged by the
    worker's own CPU time, which other load on the shared machine does not inflate: the four
    need four times one's CPU, and the process never has more than one core busy."""
    t = targets("pool", "--threads", "4")
    worker = descendants(t.proc.pid)[-1]  # launcher -> gunicorn master -> its one worker
    n = 1_000_000
    c0 = cpu_seconds(worker)
    t.get(f"/work?steps=cpu:{n}")
    n = max(10_000, int(n * 0.3 / max(cpu_seconds(worker) - c0, 0.01)))  # ~300 ms of CPU
    c0 = cpu_seconds(worker)
    t.get(f"/work?steps=cpu:{n}")
    alone = cpu_seconds(worker) - c0
    c0 = cpu_seconds(worker)
    wall, answers = together(t.url, [f"/work?steps=cpu:{n}"] * 4)
    busy = cpu_seconds(worker) - c0
    assert_all_ok(answers)
    numbers = f"cpu:{n} alone {alone:.3f} s of CPU; 4 at once: {wall:.3f} s, {busy:.3f} s of CPU"
    assert wall >= 3.0 * alone, f"threads computed in parallel? {numbers}"
    assert busy / wall < 1.3, f"more than one core busy at once: {numbers}"
    wall, answers = together(t.url, sleeps(4, 400))
    assert_all_ok(answers)
    assert wall < 0.75, f"4 sleeps of 400 ms on 4 threads took {wall:.3f} s: no overlap"


def test_virtual_green_threads_overlap_many_sleeps(targets):
    t = targets("virtual")
    wall, answers = together(t.url, sleeps(20))
    assert_all_ok(answers)
    assert wall < 2.5 * S / 1000, f"20 sleeps on gevent took {wall:.3f} s"
    a = t.get(f"/work?steps=par(sleep:{S},sleep:{S},sleep:{S})")
    assert a.status == 200 and a.ms < 2 * S - 50, f"par did not overlap: {a.ms:.0f} ms"


def test_loop_blocking_serialises_everything(targets):
    t = targets("loop-blocking")
    wall, answers = together(t.url, sleeps(4, 200))
    assert_all_ok(answers)
    assert wall >= 0.78, f"4 sleeps of 200 ms on a blocked loop took {wall:.3f} s (want >= 0.8)"
    a = t.get("/work?steps=par(sleep:200,sleep:200)")
    assert a.status == 200 and a.ms >= 390, f"par overlapped on a blocked loop: {a.ms:.0f} ms"


def test_loop_offload_is_capped_by_its_executor(targets):
    t = targets("loop-offload", "--offload", "2")
    wall, answers = together(t.url, sleeps(4))
    assert_all_ok(answers)
    assert 0.54 <= wall < 1.2, f"2 executor threads x 4 sleeps took {wall:.3f} s (want ~0.6)"
    a = t.get(f"/work?steps=par(sleep:{S},sleep:{S})")
    assert a.status == 200 and a.ms < 2 * S - 50, f"par did not overlap: {a.ms:.0f} ms"


def test_loop_async_holds_no_thread_while_waiting(targets):
    t = targets("loop-async")
    wall, answers = together(t.url, sleeps(20))
    assert_all_ok(answers)
    assert wall < 2.5 * S / 1000, f"20 sleeps on the loop took {wall:.3f} s"
    a = t.get(f"/work?steps=par(sleep:{S},sleep:{S},sleep:{S})")
    assert a.status == 200 and a.ms < 2 * S - 50, f"par did not overlap: {a.ms:.0f} ms"


def test_backend_calls_wait_the_models_way(targets, backends):
    """The real clients wait as the model does: psycopg and httpx yield under gevent and on
    the loop (async clients), and block the loop in loop-blocking."""
    for model in ("virtual", "loop-async", "pool"):
        t = targets(model)
        for kind in ("pg", "http"):
            wall, answers = together(t.url, [f"/work?steps={kind}:{S}"] * 4)
            assert_all_ok(answers)
            assert wall < 2 * S / 1000, f"{model}: 4 x {kind}:{S} took {wall:.3f} s: no overlap"
    t = targets("loop-blocking")
    for kind in ("pg", "http"):
        wall, answers = together(t.url, [f"/work?steps={kind}:200"] * 3)
        assert_all_ok(answers)
        assert wall >= 0.58, f"loop-blocking: 3 x {kind}:200 overlapped ({wall:.3f} s)"


def test_uvicorn_answers_without_waiting_for_a_delayed_ack(targets):
    """Regression (2026-11-23): uvicorn on the launcher's socket (`--fd`) kept Nagle's algorithm
    on every connection, so an answer's body (its second write) waited for the client's delayed
    ACK: ~40 ms on top of every request on a kept-alive connection. Thirty sequential requests
    on one connection; their median must be far under 40 ms."""
    import http.client
    import statistics
    import time

    for model in ("loop-async", "loop-offload"):
        t = targets(model)
        host, port = t.url.removeprefix("http://").split(":")
        c = http.client.HTTPConnection(host, int(port), timeout=10)
        times = []
        try:
            for _ in range(30):
                t0 = time.perf_counter()
                c.request("GET", "/work?steps=sleep:1")
                r = c.getresponse()
                r.read()
                assert r.status == 200
                times.append((time.perf_counter() - t0) * 1000)
        finally:
            c.close()
        median = statistics.median(times)
        assert median < 25, f"{model}: median {median:.1f} ms for sleep:1 on one connection " \
                            f"(a delayed ACK costs ~40 ms): {[round(x) for x in times]}"
