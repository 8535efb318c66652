"""A WebSocket echo server built on Python's `websockets` (asyncio), for
crates/loadgen/tests/held/foreign.rs: a server not written by us.

Usage: ws_echo.py PORT  (0: any free port). Prints `listening PORT` once
bound, echoes every message and
never closes first.
"""
import asyncio
import sys

from websockets.asyncio.server import serve


async def echo(ws):
    async for message in ws:
        await ws.send(message)


async def main(port):
    async with serve(echo, "127.0.0.1", port, max_size=1 << 20) as server:
        bound = next(iter(server.sockets)).getsockname()[1]
        print(f"listening {bound}", flush=True)
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
