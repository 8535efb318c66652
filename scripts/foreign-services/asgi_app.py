"""A plain asyncio ASGI app for uvicorn: /work computes for ?cpu_ms=N (default 4) of this
thread's CPU time, on the event loop, then answers "ok"; /health answers "ok". One process
(one interpreter lock, one loop) computes one request at a time, so it serves about
1 / (CPU per request) requests per second on the core it gets: the CPU is its limit.
/metrics answers Prometheus text counting what it served (requests, body bytes received),
the kind of endpoint a Spring Boot actuator offers, for the tests of a preset's `metrics`."""
import time
from urllib.parse import parse_qs


def burn(ms):
    end = time.thread_time() + ms / 1000.0
    x = 0
    while time.thread_time() < end:
        for i in range(200):
            x += i * i
    return x


COUNTS = {"app_requests_total": 0, "app_body_bytes_total": 0}


async def body_length(receive):
    n, more = 0, True
    while more:
        message = await receive()
        n += len(message.get("body", b""))
        more = message.get("more_body", False)
    return n


def metrics():
    lines = [f"# TYPE {k} counter\n{k}{{app=\"asgi\"}} {v}\n" for k, v in COUNTS.items()]
    return "".join(lines).encode()


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    status = 200
    body = b"ok"
    if scope["path"] == "/metrics":
        body = metrics()
    elif scope["path"] == "/work":
        COUNTS["app_body_bytes_total"] += await body_length(receive)
        query = parse_qs(scope.get("query_string", b"").decode())
        burn(float(query.get("cpu_ms", ["4"])[0]))
        COUNTS["app_requests_total"] += 1
    elif scope["path"] != "/health":
        status, body = 404, b""
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
