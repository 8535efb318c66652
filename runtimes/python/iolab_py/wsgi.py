"""The WSGI app gunicorn serves for prefork (sync workers), pool (gthread) and virtual
(gevent): each request runs on the thread (or green thread) that gunicorn gave it."""

from . import held, route
from .answers import JSON, REASONS, error
from .run_blocking import BlockingRunner
from .service import Service

service = Service()
runner = BlockingRunner(service.backends, threads_for_par=service.model != "prefork")


def app(environ, start_response):
    method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
    if method == "GET" and path == "/events":
        return held.wsgi_events(environ, start_response, route.param)
    if method == "GET" and path == "/ws":
        if not held.wants_websocket(environ):
            body = error("GET /ws needs Upgrade: websocket and Sec-WebSocket-Key")
            start_response("400 Bad Request", [("Content-Type", JSON),
                                               ("Content-Length", str(len(body)))])
            return [body]
        held.wsgi_websocket(service, runner, environ)
        start_response("101 Switching Protocols", [])
        return []
    fixed = service.answer(method, path)
    if fixed is None:
        started = service.begin()
        work = None
        try:
            work = service.plan(environ.get("QUERY_STRING", ""))
            outcome = runner.run(work.step)
        except Exception as e:
            outcome = e
        fixed = service.end(work, started, outcome)
    status, ctype, body = fixed
    start_response(f"{status} {REASONS.get(status, 'Unknown')}",
                   [("Content-Type", ctype), ("Content-Length", str(len(body)))])
    return [body]
