"""First-come-first-served leases of a few connections, waiting at most a bound for one.

queue.Queue lets a newcomer take a slot just put back while older waiters sleep on; with one
memcached connection and 170 clients (E4) that barging gives a few requests multi-second
waits. Here a released slot is handed to the oldest waiter directly. The thread version works
for OS threads and, monkey-patched, for gevent's green threads.
"""

import asyncio
import collections
import threading


class LeaseTimeout(Exception):
    pass


class ThreadLease:
    def __init__(self, slots):
        self._free = collections.deque(slots)
        self._waiters = collections.deque()   # [Event, slot or None]
        self._lock = threading.Lock()

    def acquire(self, timeout: float):
        with self._lock:
            if self._free and not self._waiters:
                return self._free.popleft()
            waiter = [threading.Event(), None]
            self._waiters.append(waiter)
        waiter[0].wait(timeout)
        with self._lock:
            if waiter[1] is not None:
                return waiter[1]
            self._waiters.remove(waiter)
        raise LeaseTimeout()

    def release(self, slot):
        with self._lock:
            if self._waiters:
                waiter = self._waiters.popleft()
                waiter[1] = slot
                waiter[0].set()
            else:
                self._free.append(slot)


class AsyncLease:
    """The same for one asyncio loop: waiting holds no thread."""

    def __init__(self, slots):
        self._free = collections.deque(slots)
        self._waiters = collections.deque()   # futures

    async def acquire(self, timeout: float):
        if self._free and not self._waiters:
            return self._free.popleft()
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError) as e:
            if fut.done() and not fut.cancelled():
                # Handed a slot just as we gave up: pass it on, never lose it.
                self.release(fut.result())
            else:
                fut.cancel()
                self._waiters.remove(fut)
            if isinstance(e, asyncio.TimeoutError):
                raise LeaseTimeout() from None
            raise

    def release(self, slot):
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(slot)
                return
        self._free.append(slot)
