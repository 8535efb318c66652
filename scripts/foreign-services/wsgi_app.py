"""A plain WSGI app for gunicorn's sync workers: /work sleeps ?ms=N (default 50) then
answers "ok"; /health answers "ok". One sync worker holds one request for the sleep, so
W workers serve W / sleep requests per second: the configuration's capacity."""
import time
from urllib.parse import parse_qs


def app(environ, start_response):
    path = environ.get("PATH_INFO", "/")
    if path == "/work":
        query = parse_qs(environ.get("QUERY_STRING", ""))
        time.sleep(float(query.get("ms", ["50"])[0]) / 1000.0)
    elif path != "/health":
        start_response("404 Not Found", [("Content-Length", "0")])
        return [b""]
    body = b"ok"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
