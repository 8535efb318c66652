"""`--metrics-port`: GET /metrics on a second listener in the launcher process, which serves
no requests of its own, so a saturated worker pool or a blocked event loop cannot starve it
(as Spring Boot's management port). It reads the same shared counters the workers write."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import answers, metrics


def start(port: int, counters):
    """Bind 127.0.0.1:port now (0: a free port); serve once `serve()` is called. The server."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            if self.path.split("?")[0] == "/metrics":
                status, ctype, body = 200, answers.PROMETHEUS, metrics.render(counters)
            else:
                status, ctype, body = 404, answers.JSON, answers.error(
                    f"no such path '{self.path}' (the metrics listener has /metrics)")
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server


def serve(server):
    threading.Thread(target=server.serve_forever, name="iolab-metrics", daemon=True).start()
