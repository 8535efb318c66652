"""The plain ASGI app uvicorn serves for the loop-* models: one `async def` per request on the
process's event loop; AsyncRunner decides how it waits (see run_async.py)."""

from . import held, route
from .answers import JSON, error
from .run_async import AsyncRunner
from .service import Service

service = Service()
runner = AsyncRunner(service.backends, way=service.model.removeprefix("loop-"),
                     offload=service.settings.knobs.get("offload", 0))


async def app(scope, receive, send):
    if scope["type"] == "websocket":
        return await held.asgi_websocket(service, runner, scope, receive, send)
    if scope["type"] != "http":
        return  # no lifespan work (uvicorn runs with --lifespan off)
    if scope["method"] == "GET" and scope["path"] == "/events":
        return await held.asgi_events(scope, receive, send, route.param)
    fixed = service.answer(scope["method"], scope["path"])
    if scope["method"] == "GET" and scope["path"] == "/ws":
        fixed = 400, JSON, error("GET /ws needs Upgrade: websocket and Sec-WebSocket-Key")
    if fixed is None:
        query = scope["query_string"].decode("latin-1")
        started = service.begin()
        work = None
        try:
            work = service.plan(query)
            outcome = await runner.run(work.step)
        except Exception as e:
            outcome = e
        fixed = service.end(work, started, outcome)
    status, ctype, body = fixed
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", ctype.encode()),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
