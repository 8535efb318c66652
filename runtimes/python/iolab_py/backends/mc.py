"""`mc:KEY`: a memcached get, through pymemcache (blocking: its socket waits on the calling
thread, or green thread under gevent) or aiomcache (asyncio streams). Like the Rust and JVM
targets, `--mc-pool` connections (default 1, E4's set-up) are leased one get at a time, first
come first served, waiting up to 30 s for one. A connection that failed or was cut off
mid-answer is closed and made anew on its next lease."""

import asyncio

import aiomcache
import pymemcache

from ..answers import WorkError
from .lease import AsyncLease, LeaseTimeout, ThreadLease

WAIT_S = 30.0
CONNECT_S = 5.0
IO_S = 30.0


class _Slot:
    client = None


def _miss(key: str) -> WorkError:
    return WorkError(502, f"backend 'mc': key '{key}' not found "
                          f"(store it with `iolab backend mc-fill --key {key}`)")


class Mc:
    def __init__(self, addr: str, pool: int):
        self.addr = addr
        host, _, port = addr.rpartition(":")
        self.host, self.port = host, int(port)
        self._pool = pool
        self._blocking = ThreadLease(_Slot() for _ in range(pool))
        self._async = None  # made in the loop that uses it

    def _unavailable(self, e) -> WorkError:
        detail = str(e) or type(e).__name__
        return WorkError(503, f"backend 'mc' unavailable: {self.addr}: {detail}")

    def get_blocking(self, key: str) -> bytes:
        try:
            slot = self._blocking.acquire(WAIT_S)
        except LeaseTimeout:
            raise WorkError(503, f"backend 'mc' pool timeout after {int(WAIT_S * 1000)} ms") from None
        try:
            if slot.client is None:
                slot.client = pymemcache.Client((self.host, self.port), connect_timeout=CONNECT_S,
                                                timeout=IO_S, no_delay=True)
            try:
                value = slot.client.get(key)
            except Exception as e:
                slot.client.close()
                slot.client = None
                raise self._unavailable(e) from None
        finally:
            self._blocking.release(slot)
        if value is None:
            raise _miss(key)
        return value

    async def get_async(self, key: str) -> bytes:
        if self._async is None:
            self._async = AsyncLease(_Slot() for _ in range(self._pool))
        try:
            slot = await self._async.acquire(WAIT_S)
        except LeaseTimeout:
            raise WorkError(503, f"backend 'mc' pool timeout after {int(WAIT_S * 1000)} ms") from None
        try:
            if slot.client is None:
                # One connection per slot: the lease, not aiomcache's pool, decides who waits.
                slot.client = aiomcache.Client(self.host, self.port, pool_size=1)
            try:
                value = await asyncio.wait_for(slot.client.get(key.encode()), IO_S)
            except BaseException as e:
                # A get cut off mid-answer leaves bytes on the connection: drop it.
                client, slot.client = slot.client, None
                await asyncio.shield(client.close())
                if isinstance(e, asyncio.CancelledError) or not isinstance(e, Exception):
                    raise
                raise self._unavailable(e) from None
        finally:
            self._async.release(slot)
        if value is None:
            raise _miss(key)
        return value
