'use strict';
// The non-blocking clients of one thread: what `loop-async` awaits on its loop, and what
// the io thread (io-thread.js) runs for the models that wait synchronously.

const { Http } = require('./http');
const { Pg } = require('./pg');
const { Mc } = require('./mc');

class Backends {
  /** Clients for the backends `settings` names; the others stay null (their steps are refused). */
  constructor(settings) {
    this.http = settings.http ? new Http(settings.http) : null;
    this.pg = settings.pg ? new Pg(settings.pg, settings.knobs.pg_pool, settings.pgWaitMs) : null;
    this.mc = settings.mc ? new Mc(settings.mc, settings.knobs.mc_pool) : null;
  }

  /** Can a step of `kind` be served with `settings`? (No client is made to answer.) */
  static configured(settings, kind) {
    return kind === 'sleep' || Boolean(settings[kind]);
  }

  /** Does any step of `settings` need a client (so an io thread is worth starting)? */
  static any(settings) {
    return Boolean(settings.http || settings.pg || settings.mc);
  }

  /** One http/pg/mc leaf: a Promise of the fetched value (a Buffer for mc) or null. */
  call(leaf) {
    switch (leaf.kind) {
      case 'http':
        return this.http.delay(leaf.micros);
      case 'pg':
        return this.pg.sleep(leaf.micros);
      case 'mc':
        return this.mc.get(leaf.key);
      default:
        return Promise.reject(new Error(`not a backend call: ${leaf.kind}`));
    }
  }
}

module.exports = { Backends };
