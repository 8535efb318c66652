"""How a workload runs inside an asyncio handler (uvicorn), with the model's way of waiting on
an io step; `par(...)` is asyncio.gather, so children overlap exactly where waiting yields:
- loop-blocking: the blocking call right on the loop thread (time.sleep, psycopg, pymemcache,
  httpx.Client inside `async def`): the classic mistake; the loop serves nothing meanwhile.
- loop-offload: the blocking call through asyncio.to_thread on the loop's default executor,
  sized to `--offload` threads; the loop stays free, the executor's threads do the waiting.
- loop-async: asyncio.sleep and the async clients: no thread waits.
A cpu step runs on the loop in every model (and holds it, as any CPU work in a coroutine)."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

from .answers import WorkError
from .counters import QUEUED
from .cpu import leibniz
from .run_blocking import first_error
from .steps import Cpu, Io, Seq


class AsyncRunner:
    def __init__(self, backends, way: str, offload: int = 0):
        self.backends = backends
        self.way = way
        self.offload = offload
        self._loop = None

    def _executor_ready(self):
        # Once per loop: asyncio's default executor, sized by --offload.
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            loop.set_default_executor(
                ThreadPoolExecutor(max_workers=self.offload, thread_name_prefix="iolab-offload"))
            self._loop = loop

    def _job(self, io):
        self.backends.counters.add(QUEUED, -1)  # it has its thread now
        return self.backends.call_blocking(io)

    async def io(self, step):
        if self.way == "blocking":
            return self.backends.call_blocking(step)
        if self.way == "offload":
            self._executor_ready()
            self.backends.counters.add(QUEUED)
            return await asyncio.to_thread(self._job, step)
        return await self.backends.call_async(step)

    async def run(self, step):
        if isinstance(step, Cpu):
            leibniz(step.terms)
            return None
        if isinstance(step, Io):
            return await self.io(step)
        if isinstance(step, Seq):
            last = None
            for child in step.children:
                v = await self.run(child)
                last = v if v is not None else last
            return last
        # Every child runs to its end, even after one fails (as in the other runtimes).
        done = await asyncio.gather(*(self.run(c) for c in step.children),
                                    return_exceptions=True)
        results = []
        for r in done:
            if isinstance(r, WorkError):
                results.append((False, r))
            elif isinstance(r, BaseException):
                raise r
            else:
                results.append((True, r))
        return first_error(results)
