"""How a workload runs where a request owns a thread (gunicorn's sync, gthread and gevent
workers): every io step blocks the calling thread. The models differ only in `par(...)`:
- prefork: the children run one after another; a sync worker is one single-threaded process
  (as unicorn or PHP-FPM), with no other thread to give a child.
- pool, virtual: the first child runs on the request's thread, each other on a new
  threading.Thread, and the request joins them: what a handler fanning out by hand costs.
  Under gevent, threading is monkey-patched, so those are green threads."""

import threading

from .answers import WorkError
from .cpu import leibniz
from .steps import Cpu, Io, Par, Seq


def first_error(results):
    """Every child's (ok, value-or-error) in written order: the first error wins; without one,
    the last value fetched (for body=value)."""
    last = None
    for ok, v in results:
        if not ok:
            raise v
        last = v if v is not None else last
    return last


def _guard(fn, step):
    try:
        return True, fn(step)
    except WorkError as e:
        return False, e
    except Exception as e:  # a bug, answered as one instead of losing the request
        return False, WorkError(500, f"a par(...) child failed: {type(e).__name__}: {e}")


class BlockingRunner:
    def __init__(self, backends, threads_for_par: bool):
        self.backends = backends
        self.threads_for_par = threads_for_par

    def run(self, step):
        """Run `step` on this thread; the last mc value fetched, in written order, or None."""
        if isinstance(step, Cpu):
            leibniz(step.terms)
            return None
        if isinstance(step, Io):
            return self.backends.call_blocking(step)
        if isinstance(step, Seq):
            last = None
            for child in step.children:
                v = self.run(child)
                last = v if v is not None else last
            return last
        if not self.threads_for_par:
            return first_error([_guard(self.run, c) for c in step.children])
        return self._fan_out(step.children)

    def _fan_out(self, children):
        results = [None] * len(children)

        def child(i):
            results[i] = _guard(self.run, children[i])

        threads = []
        for i in range(1, len(children)):
            t = threading.Thread(target=child, args=(i,), daemon=True)
            try:
                t.start()
            except RuntimeError as e:
                results[i] = (False, WorkError(
                    503, f"the OS refused a thread for a par(...) child: {e}"))
                continue
            threads.append(t)
        child(0)
        for t in threads:
            t.join()
        return first_error(results)
