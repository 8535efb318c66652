'use strict';
// loop-offload's pool: `offload` worker_threads, each given one IO leaf at a time and held
// for its whole duration (it waits in Atomics.wait: a sleep, or the io thread's answer).
// Leaves beyond the pool wait in a FIFO queue, counted in iolab_requests_queued, the way
// `withContext(Dispatchers.IO)` or libuv's threadpool queue their jobs.

const path = require('path');
const { Worker } = require('worker_threads');
const { WorkError, workError } = require('./answers');

class OffloadPool {
  /** `size` threads; `channel()` makes each one's line to the io thread (or returns null). */
  constructor(size, counters, channel) {
    this.counters = counters;
    this.channel = channel;
    this.free = [];
    this.queue = [];
    this.jobs = new Map(); // job id -> {resolve, reject, worker}
    this.seq = 0;
    for (let i = 0; i < size; i++) this.free.push(this.spawn());
  }

  spawn() {
    const io = this.channel();
    const worker = new Worker(path.join(__dirname, 'offload-thread.js'), {
      workerData: { io: io && io.caller },
      transferList: io ? [io.caller.port] : [],
    });
    worker.on('message', (m) => this.done(worker, m));
    worker.on('error', (e) => this.failed(worker, e));
    return worker;
  }

  /** A Promise of the leaf's fetched Buffer (mc) or null, run on the next free thread. */
  run(leaf) {
    return new Promise((resolve, reject) => {
      const job = { id: ++this.seq, leaf, resolve, reject };
      const worker = this.free.shift();
      if (worker) {
        this.send(worker, job);
      } else {
        this.counters.queue(1);
        this.queue.push(job);
      }
    });
  }

  send(worker, job) {
    job.worker = worker;
    this.jobs.set(job.id, job);
    worker.postMessage({ id: job.id, leaf: job.leaf });
  }

  /** The thread is free again: give it the oldest queued leaf. */
  next(worker) {
    const job = this.queue.shift();
    if (job) {
      this.counters.queue(-1);
      this.send(worker, job);
    } else {
      this.free.push(worker);
    }
  }

  done(worker, { id, value, error }) {
    const job = this.jobs.get(id);
    this.jobs.delete(id);
    this.next(worker);
    if (error) job.reject(workError(error));
    else job.resolve(value === null ? null : Buffer.from(value));
  }

  /** A thread that died fails its leaf and is replaced, so the pool keeps its size. */
  failed(worker, e) {
    process.stderr.write(`offload thread failed: ${e.stack || e}\n`);
    for (const [id, job] of this.jobs) {
      if (job.worker === worker) {
        this.jobs.delete(id);
        job.reject(new WorkError(500, `offload thread failed: ${e.message}`));
      }
    }
    this.free = this.free.filter((w) => w !== worker);
    this.next(this.spawn());
  }
}

module.exports = { OffloadPool };
