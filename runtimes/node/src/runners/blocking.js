'use strict';
// loop-blocking and prefork: the steps run synchronously on the thread that serves the
// request. A sleep is Atomics.wait; http, pg and mc calls wait in Atomics.wait for the io
// thread (bridge.js). The loop serves nothing else meanwhile, and par(...) children run
// one after another: this thread is the only one the request has.

const { leibniz } = require('../cpu');
const { sleepBlocking } = require('../sleep');
const { firstError } = require('./outcome');

class BlockingRunner {
  /** `call(leaf)`: the synchronous http/pg/mc call (bridge.caller), or null without backends. */
  constructor(counters, call) {
    this.counters = counters;
    this.call = call;
  }

  /** Run `step` to its end on this thread: the last mc value in written order (or null). */
  run(step) {
    switch (step.t) {
      case 'cpu':
        leibniz(step.terms);
        return null;
      case 'io':
        this.counters.call(step.kind);
        if (step.kind === 'sleep') {
          sleepBlocking(step.micros);
          return null;
        }
        return this.call(step);
      case 'seq': {
        let last = null;
        for (const child of step.children) last = this.run(child) ?? last;
        return last;
      }
      default:
        return firstError(
          step.children.map((c) => {
            try {
              return { ok: true, value: this.run(c) };
            } catch (error) {
              return { ok: false, error };
            }
          }),
        );
    }
  }
}

module.exports = { BlockingRunner };
