'use strict';
// The four Node models, the knobs each takes and their Node defaults. runtime.toml says the
// same to iolab; tests/manifest.test.js keeps the two in step.

const os = require('os');

const MODELS = Object.freeze({
  'loop-async': {
    knobs: ['processes', 'mc_pool', 'pg_pool'],
    defaults: { processes: 1 },
    about: 'one event loop per process: timers, memjs, node-postgres Pool, undici',
  },
  'loop-blocking': {
    knobs: ['mc_pool', 'pg_pool'],
    defaults: {},
    about: 'one event loop that waits synchronously (Atomics.wait): one request at a time',
  },
  'loop-offload': {
    knobs: ['offload', 'mc_pool', 'pg_pool'],
    // libuv's threadpool size (UV_THREADPOOL_SIZE), what fs and dns.lookup offload to.
    defaults: { offload: 4 },
    about: 'event loop + worker_threads pool of `offload` threads, each held for a whole IO step',
  },
  prefork: {
    knobs: ['processes', 'mc_pool', 'pg_pool'],
    // Like gunicorn's advice of one sync worker per core; `cores` is this machine's.
    defaults: { processes: 'cores' },
    about: 'cluster of `processes` workers, each serving one request at a time, blocking',
  },
});

/** iolab's one list of knobs (crates/model); those no Node model takes are refused by name. */
const ALL_KNOBS = Object.freeze([
  'threads',
  'max_connections',
  'backlog',
  'workers',
  'offload',
  'max_threads',
  'processes',
  'mc_pool',
  'pg_pool',
]);

/** iolab's defaults for the knobs Node models take (Rust/JVM targets). */
const IOLAB_DEFAULTS = Object.freeze({ mc_pool: 1, pg_pool: 10 });

/** The value of knob `name` for `model` when the launcher was not given it. */
function defaultKnob(model, name) {
  const d = MODELS[model].defaults[name] ?? IOLAB_DEFAULTS[name];
  return d === 'cores' ? os.availableParallelism() : d;
}

module.exports = { MODELS, ALL_KNOBS, defaultKnob, NAMES: Object.keys(MODELS) };
