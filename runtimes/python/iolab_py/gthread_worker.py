"""gunicorn's gthread worker, counting what waits for a thread: a connection with a request
is handed to the worker's ThreadPoolExecutor (`threads` threads) and waits in its queue until
a thread takes it. That wait is the pool model's `iolab_requests_queued`. Nothing else
changes: accepting, keep-alive and the pool are gunicorn's own."""

from gunicorn.workers.gthread import ThreadWorker

from .counters import QUEUED, shared


class CountingThreadWorker(ThreadWorker):
    def enqueue_req(self, conn):
        shared().add(QUEUED)
        super().enqueue_req(conn)

    def handle(self, conn):
        shared().add(QUEUED, -1)
        return super().handle(conn)
