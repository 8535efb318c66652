"""`--warmup N`: the launcher sends N requests to its own target before it prints the URL,
then zeroes the counters. Python has no JIT to warm, but the first requests of each process
still pay for lazy imports, the first connections and the allocator's first arenas; a few
hundred small requests from several connections reach most worker processes."""

import http.client
import threading

CLIENTS = 8


def get(port: int, path: str, timeout: float = 30.0):
    """One GET on a new connection: (status, body)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def run(port: int, n: int):
    left = [n]
    lock = threading.Lock()

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while True:
            with lock:
                if left[0] <= 0:
                    break
                left[0] -= 1
            try:
                conn.request("GET", "/work?steps=sleep:1")
                conn.getresponse().read()
            except (OSError, http.client.HTTPException):
                conn.close()  # http.client reconnects on the next request
        conn.close()

    threads = [threading.Thread(target=client, daemon=True) for _ in range(min(CLIENTS, n))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for path in ("/health", "/metrics", "/nope"):
        try:
            get(port, path)
        except (OSError, http.client.HTTPException):
            pass
