"""`http:MS`: `GET {base}/delay?ms=MS` on iolab's delay service, through httpx: its blocking
Client (threads, or green threads under gevent) or its AsyncClient (loop-async). Neither caps
concurrency, as in the Rust and JVM targets: the delay service is not the resource under study.
"""

import httpx

from ..answers import WorkError
from ..steps import millis_text

CONNECT_S = 5.0
# No connection cap; keep-alive for as many as a burst opened (httpx keeps 20 by default).
LIMITS = httpx.Limits(max_connections=None, max_keepalive_connections=1000)


class Http:
    def __init__(self, base: str):
        self.base = base
        # Both are cheap until used and safe to share: the sync one across threads, the async
        # one within the process's single event loop.
        self._sync = httpx.Client(limits=LIMITS)
        self._async = httpx.AsyncClient(limits=LIMITS)

    def _url(self, micros: int) -> str:
        return f"{self.base}/delay?ms={millis_text(micros)}"

    @staticmethod
    def _timeout(micros: int) -> httpx.Timeout:
        # The step's own delay plus a margin: a hung service must not hang the target.
        return httpx.Timeout(micros / 1e6 + 30.0, connect=CONNECT_S)

    @staticmethod
    def _check(r: httpx.Response):
        if r.status_code != 200:
            raise WorkError(502, f"backend 'http': delay service answered {r.status_code}")

    @staticmethod
    def _unavailable(e: Exception) -> WorkError:
        return WorkError(503, f"backend 'http' unavailable: {str(e) or type(e).__name__}")

    def call_blocking(self, micros: int):
        try:
            r = self._sync.get(self._url(micros), timeout=self._timeout(micros))
        except httpx.HTTPError as e:
            raise self._unavailable(e) from None
        self._check(r)

    async def call_async(self, micros: int):
        try:
            r = await self._async.get(self._url(micros), timeout=self._timeout(micros))
        except httpx.HTTPError as e:
            raise self._unavailable(e) from None
        self._check(r)
