"""Each model's way of waiting, with real timing and generous margins (the machine is shared):
how many 300 ms sleeps overlap, whether par(...) overlaps, and the GIL: threads of one process
take turns at pure-Python CPU work while their sleeps overlap."""

from conftest import together

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
    parallel threads would take about 2x), while 4 concurrent sleeps overlap."""
    t = targets("pool", "--threads", "4")
    n = 1_000_000
    one = t.get(f"/work?steps=cpu:{n}").json()["elapsed_ms"]
    n = max(10_000, int(n * 300 / max(one, 1)))  # about 300 ms alone on this machine
    alone = min(t.get(f"/work?steps=cpu:{n}").elapsed for _ in range(2))
    wall, answers = together(t.url, [f"/work?steps=cpu:{n}"] * 4)
    assert_all_ok(answers)
    # Other load on the machine only lengthens `wall`; re-measure `alone` to judge fairly.
    alone = min(alone, t.get(f"/work?steps=cpu:{n}").elapsed)
    assert wall >= 3.0 * alone, (
        f"4 x cpu:{n} took {wall:.3f} s, one alone {alone:.3f} s: threads ran in parallel?")
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
