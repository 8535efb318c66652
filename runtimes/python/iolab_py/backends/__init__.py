"""Where io steps go: the embedded `sleep`, and `http`, `pg` and `mc` when their addresses are
given. Each backend has a blocking call (the calling thread, or green thread, waits) and an
async one (a coroutine waits, no thread does); a model picks which, and where it runs. Every
call is counted in /metrics before it starts, whatever its outcome."""

import asyncio
import time

from .http import Http
from .mc import Mc
from .pg import Pg


class Backends:
    def __init__(self, settings, counters):
        k = settings.knobs
        self.http = Http(settings.http_backend) if settings.http_backend else None
        self.pg = Pg(settings.pg, k["pg_pool"], settings.pg_wait_ms) if settings.pg else None
        self.mc = Mc(settings.mc, k["mc_pool"]) if settings.mc else None
        self.configured = {"sleep"} | {n for n in ("http", "pg", "mc") if getattr(self, n)}
        self.counters = counters

    def call_blocking(self, io):
        """Run one io step on this thread; the fetched value for mc, else None."""
        self.counters.call(io.kind)
        if io.kind == "sleep":
            time.sleep(io.micros / 1e6)
        elif io.kind == "http":
            self.http.call_blocking(io.micros)
        elif io.kind == "pg":
            self.pg.sleep_blocking(io.micros)
        else:
            return self.mc.get_blocking(io.key)
        return None

    async def call_async(self, io):
        self.counters.call(io.kind)
        if io.kind == "sleep":
            await asyncio.sleep(io.micros / 1e6)
        elif io.kind == "http":
            await self.http.call_async(io.micros)
        elif io.kind == "pg":
            await self.pg.sleep_async(io.micros)
        else:
            return await self.mc.get_async(io.key)
        return None
