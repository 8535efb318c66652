"""The contract's held connections (runtimes/README.md, "Held connections"; the Rust reference
is crates/servers/src/held.rs and held_async.rs), for both servers:
- uvicorn (the loop-* models, asgi.py): `GET /ws` is uvicorn's WebSocket protocol on the
  `websockets` library (--ws websockets-sansio); each message runs the URL's steps on the
  model's AsyncRunner; `GET /events` is a streamed ASGI answer on the event loop.
- gunicorn (prefork, pool, virtual; wsgi.py): WSGI has no upgrade, so the worker's thread takes
  the connection's socket (environ["gunicorn.socket"]) and speaks WebSocket on it itself with
  `websockets`' sans-I/O ServerProtocol: a thread (a green thread under gevent, a whole
  process under sync workers) per held connection, as the model holds any request. `/events` is
  a WSGI answer whose iterator sleeps: it holds its thread the same way.
Each message is echoed unchanged after its steps; steps that fail close with 1011; a client
silent for IDLE_S is closed with 1001. Events: `id: N` from 1, data
`{"seq":N,"sent_unix_us":T}` (the wall clock in µs when written), the first at once."""

import asyncio
import re
import time

from websockets.datastructures import Headers
from websockets.frames import Opcode
from websockets.http11 import Request
from websockets.server import ServerProtocol

IDLE_S = 60.0
MAX_FRAME = 1 << 20
EVERY_S = 1.0
MIN_EVERY_S = 0.001
_UNITS = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(us|µs|ms|min|m|s|h)")


def duration_s(text):
    """iolab's durations (`100ms`, `1s`, `1m30s`) in seconds, or None when not one."""
    at, total = 0, 0.0
    while at < len(text):
        m = _DURATION.match(text, at)
        if m is None:
            return None
        total += float(m.group(1)) * _UNITS[m.group(2)]
        at = m.end()
    return total if at > 0 and total <= 7 * 86400 else None


def every_s(query: str, param) -> float:
    """The /events interval of `query` (default 1 s, at least 1 ms), as the Rust models read it."""
    try:
        raw = param(query, "every")
    except Exception:  # a bad escape: the default, as the Rust models do
        raw = None
    got = duration_s(raw) if raw is not None else None
    return max(MIN_EVERY_S, EVERY_S if got is None else got)


def event(seq: int) -> bytes:
    return f'id: {seq}\ndata: {{"seq":{seq},"sent_unix_us":{time.time_ns() // 1000}}}\n\n'.encode()


def ws_query(query: str):
    """The steps query a /ws URL carries, or None (echo only)."""
    return query or None


# --- uvicorn (ASGI) -----------------------------------------------------------------------

async def asgi_websocket(service, runner, scope, receive, send):
    """One WebSocket on the event loop: its messages one after the other, in order."""
    if (await receive())["type"] != "websocket.connect":
        return
    if scope["path"] != "/ws":
        return await send({"type": "websocket.close", "code": 1008})
    await send({"type": "websocket.accept"})
    query = ws_query(scope["query_string"].decode("latin-1"))
    while True:
        try:
            msg = await asyncio.wait_for(receive(), IDLE_S)
        except asyncio.TimeoutError:
            return await send({"type": "websocket.close", "code": 1001, "reason": "idle"})
        if msg["type"] != "websocket.receive":
            return  # websocket.disconnect
        if query is not None:
            started = service.begin()
            work, outcome = None, None
            try:
                work = service.plan(query)
                outcome = await runner.run(work.step)
            except Exception as e:
                outcome = e
            status, _, _ = service.end(work, started, outcome)
            if status != 200:
                return await send({"type": "websocket.close", "code": 1011,
                                   "reason": "the message's steps failed"})
        out = {"type": "websocket.send"}
        if msg.get("text") is not None:
            out["text"] = msg["text"]
        else:
            out["bytes"] = msg.get("bytes") or b""
        await send(out)


async def asgi_events(scope, receive, send, param):
    """GET /events: an event every interval until the client goes."""
    every = every_s(scope["query_string"].decode("latin-1"), param)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream"),
                            (b"cache-control", b"no-cache")]})

    async def push():
        loop = asyncio.get_running_loop()
        due = loop.time()
        seq = 0
        while True:
            seq += 1
            await send({"type": "http.response.body", "body": event(seq), "more_body": True})
            due += every
            await asyncio.sleep(max(0.0, due - loop.time()))

    async def gone():
        while (await receive())["type"] != "http.disconnect":
            pass

    tasks = [asyncio.ensure_future(push()), asyncio.ensure_future(gone())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in tasks:
            t.cancel()


# --- gunicorn (WSGI): the worker's thread takes the socket --------------------------------

def wants_websocket(environ) -> bool:
    return ("websocket" in environ.get("HTTP_UPGRADE", "").lower()
            and bool(environ.get("HTTP_SEC_WEBSOCKET_KEY")) and "gunicorn.socket" in environ)


def wsgi_websocket(service, runner, environ):
    """Hold one WebSocket on this thread until the client closes it, its steps fail, or it is
    idle; then shut the socket so gunicorn's own answer goes nowhere."""
    sock = environ["gunicorn.socket"]
    headers = Headers()
    for k, v in environ.items():
        if k.startswith("HTTP_"):
            headers[k[5:].replace("_", "-")] = v
    proto = ServerProtocol(max_size=MAX_FRAME)
    proto.send_response(proto.accept(Request(environ.get("PATH_INFO", "/ws"), headers)))
    # gunicorn read the request, not the protocol: restart its parser past the request (it
    # reads frames once the state is OPEN), or it would take the first frames for one.
    proto.parser = proto.parse()
    next(proto.parser)
    query = ws_query(environ.get("QUERY_STRING", ""))
    sock.settimeout(0.2)
    heard = time.monotonic()
    parts, opcode = [], None
    try:
        while _flush(sock, proto):
            try:
                data = sock.recv(65536)
            except TimeoutError:
                if time.monotonic() - heard > IDLE_S:
                    proto.send_close(1001, "idle")
                continue
            if not data:
                proto.receive_eof()
                continue
            heard = time.monotonic()
            proto.receive_data(data)
            for frame in proto.events_received():
                if frame.opcode in (Opcode.TEXT, Opcode.BINARY):
                    opcode, parts = frame.opcode, [frame.data]
                elif frame.opcode is Opcode.CONT:
                    parts.append(frame.data)
                else:
                    continue  # ping, pong, close: the protocol answered them
                if not frame.fin:
                    continue
                if query is not None and not _run_steps(service, runner, query):
                    proto.send_close(1011, "the message's steps failed")
                    break
                message = b"".join(parts)
                if opcode is Opcode.TEXT:
                    proto.send_text(message)
                else:
                    proto.send_binary(message)
    except OSError:
        pass
    finally:
        try:
            sock.shutdown(2)  # socket.SHUT_RDWR
        except OSError:
            pass


def _run_steps(service, runner, query) -> bool:
    """A message's steps, counted as a /work request; did they succeed?"""
    started = service.begin()
    work, outcome = None, None
    try:
        work = service.plan(query)
        outcome = runner.run(work.step)
    except Exception as e:
        outcome = e
    return service.end(work, started, outcome)[0] == 200


def _flush(sock, proto) -> bool:
    """Write what the protocol has queued; False once the connection is over."""
    for data in proto.data_to_send():
        if not data:  # the protocol's end of stream: the close handshake is done
            return False
        sock.sendall(data)
    return proto.state.name != "CLOSED"


def wsgi_events(environ, start_response, param):
    """GET /events: a WSGI answer whose iterator holds this thread between events."""
    every = every_s(environ.get("QUERY_STRING", ""), param)
    start_response("200 OK", [("Content-Type", "text/event-stream"),
                              ("Cache-Control", "no-cache")])

    def stream():
        due, seq = time.monotonic(), 0
        while True:
            seq += 1
            yield event(seq)
            due += every
            time.sleep(max(0.0, due - time.monotonic()))

    return stream()
