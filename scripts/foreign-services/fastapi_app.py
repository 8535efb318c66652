"""A FastAPI service as a team writes one, for uvicorn: GET /orders (a `def` handler, run on
anyio's thread limiter, 40 threads by default) and GET /orders-async (an `async def` handler)
each wait `pg_sleep(ms / 1000)` (?ms=, default 50) in PostgreSQL on a psycopg pool (ConnectionPool and
AsyncConnectionPool, DATABASE_URL, POOL_SIZE connections each, default 50, each opened whole
at its handler's first request, so a service that serves only one kind holds one pool); /health answers
"ok"; /metrics is prometheus_client's page with anyio's limiter exported under the names
docs/capacity.md gives (anyio_borrowed_tokens, anyio_total_tokens, anyio_tasks_waiting).
ANYIO_TOKENS sets the limiter's total_tokens at start-up (anyio's own knob)."""
import asyncio
import os
import threading
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI, Response
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest
from prometheus_client.core import GaugeMetricFamily
from psycopg_pool import AsyncConnectionPool, ConnectionPool

URL = os.environ["DATABASE_URL"]
SIZE = int(os.environ.get("POOL_SIZE", "50"))
pool = ConnectionPool(URL, min_size=SIZE, max_size=SIZE, open=False)
apool = AsyncConnectionPool(URL, min_size=SIZE, max_size=SIZE, open=False)
limiter_values = {"borrowed": 0.0, "total": 40.0, "waiting": 0.0}
opening = threading.Lock()
aopening = asyncio.Lock()


def sync_pool():
    with opening:
        if pool.closed:
            pool.open(wait=True)
    return pool


async def async_pool():
    async with aopening:
        if apool.closed:
            await apool.open(wait=True)
    return apool


@asynccontextmanager
async def lifespan(_app):
    tokens = os.environ.get("ANYIO_TOKENS")
    if tokens:
        anyio.to_thread.current_default_thread_limiter().total_tokens = int(tokens)
    yield
    await apool.close()
    pool.close()


app = FastAPI(lifespan=lifespan)


@app.get("/health")
async def health():
    return "ok"


@app.get("/orders")
def orders(ms: float = 50):
    with sync_pool().connection() as conn:
        conn.execute("select pg_sleep(%s)", (ms / 1000,))
    return "ok"


@app.get("/orders-async")
async def orders_async(ms: float = 50):
    async with (await async_pool()).connection() as conn:
        await conn.execute("select pg_sleep(%s)", (ms / 1000,))
    return "ok"


class Limiter:
    """anyio's limiter as three gauges: read on the event loop by /metrics, kept here."""

    def collect(self):
        for name, key, about in [
            ("anyio_borrowed_tokens", "borrowed", "threads of anyio's limiter in use"),
            ("anyio_total_tokens", "total", "anyio's limiter's total_tokens"),
            ("anyio_tasks_waiting", "waiting", "tasks waiting for a thread of the limiter"),
        ]:
            yield GaugeMetricFamily(name, about, value=limiter_values[key])


REGISTRY.register(Limiter())


@app.get("/metrics")
async def metrics():
    lim = anyio.to_thread.current_default_thread_limiter()
    limiter_values["borrowed"] = lim.borrowed_tokens
    limiter_values["total"] = lim.total_tokens
    limiter_values["waiting"] = lim.statistics().tasks_waiting
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)
