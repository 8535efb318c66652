"""`pg:MS`: `SELECT pg_sleep($1)` on PostgreSQL through psycopg 3 and psycopg_pool, the way a
Python team would call it: a ConnectionPool for the blocking models (under gevent psycopg waits
through the patched select, so a green thread yields), an AsyncConnectionPool for loop-async.
Each process has its own pool of `--pg-pool` connections (default 10, HikariCP's), opened on
demand, and waits `--pg-wait` ms for one (default 30 s): the pool caps concurrent queries."""

import asyncio
import threading

import psycopg
import psycopg_pool

from ..answers import WorkError

SQL = "SELECT pg_sleep(%s)"   # server-side binding: PostgreSQL sees SELECT pg_sleep($1)
CONNECT_S = 5


class Pg:
    def __init__(self, url: str, pool: int, wait_ms: int):
        self.url, self.size, self.wait_ms = url, pool, wait_ms
        self._kwargs = {"autocommit": True, "connect_timeout": CONNECT_S,
                        "application_name": "iolab"}
        self._sync = None
        self._sync_lock = threading.Lock()
        self._async = None

    def _error(self, e: Exception) -> WorkError:
        if isinstance(e, psycopg_pool.PoolTimeout):
            return WorkError(503, f"backend 'pg' pool timeout after {self.wait_ms} ms")
        detail = str(e).strip() or type(e).__name__
        if isinstance(e, (psycopg.OperationalError, OSError)):
            return WorkError(503, f"backend 'pg' unavailable: {detail}")
        return WorkError(502, f"backend 'pg': {detail}")

    def _pool(self) -> psycopg_pool.ConnectionPool:
        with self._sync_lock:
            if self._sync is None:
                self._sync = psycopg_pool.ConnectionPool(
                    self.url, min_size=0, max_size=self.size, timeout=self.wait_ms / 1000,
                    kwargs=self._kwargs, open=False, name="iolab-pg")
                # Start without PostgreSQL: a dead backend is an answer (503), not a crash.
                self._sync.open(wait=False)
            return self._sync

    def sleep_blocking(self, micros: int):
        try:
            with self._pool().connection() as conn:
                conn.execute(SQL, (micros / 1e6,))
        except (psycopg.Error, psycopg_pool.PoolTimeout, OSError) as e:
            raise self._error(e) from None

    async def _open_async(self) -> psycopg_pool.AsyncConnectionPool:
        pool = psycopg_pool.AsyncConnectionPool(
            self.url, min_size=0, max_size=self.size, timeout=self.wait_ms / 1000,
            kwargs=self._kwargs, open=False, name="iolab-pg-async")
        await pool.open(wait=False)
        return pool

    async def sleep_async(self, micros: int):
        try:
            if self._async is None:
                # One opening task that every first caller awaits: open() may yield, and a
                # request must not meet a pool that is made but not open yet.
                self._async = asyncio.ensure_future(self._open_async())
            pool = await self._async
            async with pool.connection() as conn:
                await conn.execute(SQL, (micros / 1e6,))
        except (psycopg.Error, psycopg_pool.PoolTimeout, OSError) as e:
            raise self._error(e) from None
