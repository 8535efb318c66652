"""uvicorn's httptools protocol with TCP_NODELAY on every connection.

The launcher hands uvicorn its listening socket (`--fd N`), and uvicorn wraps it as
`socket.fromfd(fd, AF_UNIX, SOCK_STREAM)` whatever it really is. asyncio sets TCP_NODELAY only
on sockets it sees as AF_INET or AF_INET6, so every accepted connection kept Nagle's algorithm,
and uvicorn writes an answer as two writes (head, then body): the body waited for the client's
delayed ACK, about 40 ms. Measured (python-showdown, 2026-11-23): uvicorn's loop-async and
loop-offload answered sleep:100 in p50 144-152 ms where gevent and Rust answered in 102 ms.
uvicorn bound by itself (`--host/--port`, as it is usually run) gets TCP_NODELAY from asyncio;
this class gives the lab's target the same, through uvicorn's own `--http MODULE:CLASS`."""

import socket

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class HttpToolsNoDelay(HttpToolsProtocol):
    def connection_made(self, transport):
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass  # not TCP after all: nothing to turn off
        super().connection_made(transport)
