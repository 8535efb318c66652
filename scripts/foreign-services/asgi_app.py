"""A plain asyncio ASGI app for uvicorn: /work computes for ?cpu_ms=N (default 4) of this
thread's CPU time, on the event loop, then answers "ok"; /health answers "ok". One process
(one interpreter lock, one loop) computes one request at a time, so it serves about
1 / (CPU per request) requests per second on the core it gets: the CPU is its limit."""
import time
from urllib.parse import parse_qs


def burn(ms):
    end = time.thread_time() + ms / 1000.0
    x = 0
    while time.thread_time() < end:
        for i in range(200):
            x += i * i
    return x


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    status = 200
    if scope["path"] == "/work":
        query = parse_qs(scope.get("query_string", b"").decode())
        burn(float(query.get("cpu_ms", ["4"])[0]))
    elif scope["path"] != "/health":
        status = 404
    body = b"ok" if status == 200 else b""
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
