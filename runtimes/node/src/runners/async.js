'use strict';
// loop-async: the steps run as promises on the one event loop; a sleep is a timer and
// http, pg and mc calls are the non-blocking clients' promises, so no thread waits and
// par(...) children all wait at the same time (Promise.allSettled).

const { leibniz } = require('../cpu');
const { sleepAsync } = require('../sleep');
const { firstError } = require('./outcome');

class AsyncRunner {
  /** `leafCall(leaf)`: a Promise of one http/pg/mc/sleep leaf (loop-offload hands it to its pool). */
  constructor(counters, leafCall) {
    this.counters = counters;
    this.leafCall = leafCall;
  }

  /** Run `step`: a Promise of the last mc value in written order (or null). */
  async run(step) {
    switch (step.t) {
      case 'cpu':
        leibniz(step.terms);
        return null;
      case 'io':
        this.counters.call(step.kind);
        return this.leafCall(step);
      case 'seq': {
        let last = null;
        for (const child of step.children) last = (await this.run(child)) ?? last;
        return last;
      }
      default: {
        const settled = await Promise.allSettled(step.children.map((c) => this.run(c)));
        return firstError(settled.map((s) => (s.status === 'fulfilled' ? { ok: true, value: s.value } : { ok: false, error: s.reason })));
      }
    }
  }
}

/** loop-async's leaves: a timer for sleep, the clients of this thread for the rest. */
function asyncLeaves(backends) {
  return (leaf) => (leaf.kind === 'sleep' ? sleepAsync(leaf.micros) : backends.call(leaf));
}

module.exports = { AsyncRunner, asyncLeaves };
