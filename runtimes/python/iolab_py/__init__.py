"""iolab's Python targets: the target contract served by gunicorn (sync, gthread, gevent) and
uvicorn (asyncio), one concurrency model each. See runtimes/python/README.md."""
