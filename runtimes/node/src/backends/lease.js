'use strict';
// A counted lease with a FIFO queue and a bounded wait: the "wait for a pooled connection"
// part of a connection pool (HikariCP's connectionTimeout), kept apart from connecting.

class Lease {
  constructor(size) {
    this.free = size;
    this.waiters = [];
  }

  /** Resolves once a lease is held; rejects with `timedOut` after `waitMs` in the queue. */
  acquire(waitMs) {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = { resolve };
      waiter.timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(Object.assign(new Error('lease wait timed out'), { timedOut: true }));
      }, waitMs);
      this.waiters.push(waiter);
    });
  }

  /** Give a lease back: to the longest waiter, if any. */
  release() {
    const next = this.waiters.shift();
    if (next) {
      clearTimeout(next.timer);
      next.resolve();
    } else {
      this.free++;
    }
  }
}

module.exports = { Lease };
