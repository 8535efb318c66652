"""Unit tests of the parts with logic of their own: the FIFO leases and the shared counters."""

import asyncio
import os
import threading
import time

import pytest

from iolab_py.backends.lease import AsyncLease, LeaseTimeout, ThreadLease
from iolab_py.counters import COMPLETED, IN_FLIGHT, Counters


def test_thread_lease_hands_slots_to_the_oldest_waiter():
    lease = ThreadLease(["a"])
    held = lease.acquire(1)
    order = []

    def waiter(i):
        order.append((i, lease.acquire(5)))
        lease.release("a")

    threads = []
    for i in range(3):
        threads.append(threading.Thread(target=waiter, args=(i,)))
        threads[-1].start()
        time.sleep(0.05)  # queue them in a known order
    lease.release(held)
    for t in threads:
        t.join()
    assert [i for i, _ in order] == [0, 1, 2]
    with pytest.raises(LeaseTimeout):
        ThreadLease([]).acquire(0.05)


def test_async_lease_times_out_without_losing_a_slot():
    async def scenario():
        lease = AsyncLease(["a"])
        held = await lease.acquire(1)
        with pytest.raises(LeaseTimeout):
            await lease.acquire(0.05)
        later = asyncio.create_task(lease.acquire(1))
        await asyncio.sleep(0.01)
        lease.release(held)
        assert await later == "a"
        lease.release("a")
        assert await lease.acquire(0.01) == "a"

    asyncio.run(scenario())


def test_counters_sum_rows_of_processes_and_keep_a_dead_ones_totals(tmp_path):
    path = str(tmp_path / "counters")
    c = Counters.create(path, os.getpid())
    c.add(COMPLETED, 2)
    pid = os.fork()
    if pid == 0:  # a worker: its own row
        c.add(COMPLETED, 3)
        c.add(IN_FLIGHT, 1)  # left in flight as it dies: not counted once it is gone
        os._exit(0)
    os.waitpid(pid, 0)
    snap = Counters(path).snapshot()
    assert snap[COMPLETED] == 5 and snap[IN_FLIGHT] == 0
    c.zero()
    assert Counters(path).snapshot()[COMPLETED] == 0
