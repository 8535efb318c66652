'use strict';
// The contract's /metrics counters of one process, in a SharedArrayBuffer: the main
// thread books requests with Atomics, and the process's stats thread reads them even
// while the main thread is blocked (loop-blocking, prefork). The supervisor adds the
// snapshots of all processes (aggregate.js) and renders them as Prometheus text.

const fs = require('fs');
const { KINDS } = require('./steps');

const IN_FLIGHT = 0;
const QUEUED = 1;
const COMPLETED = 2;
const REJECTED = 3;
const CALLS = 4; // then one slot per backend kind, in KINDS order
const SLOTS = CALLS + KINDS.length;

class Counters {
  /** Counters over `sab` (a new one when omitted): share it with another thread to read them. */
  constructor(sab = new SharedArrayBuffer(SLOTS * 8)) {
    this.sab = sab;
    this.a = new BigInt64Array(sab);
  }

  /** A /work request started executing. */
  start() {
    Atomics.add(this.a, IN_FLIGHT, 1n);
  }

  /** A /work request is answered (any status): counted before the answer is written, so a
   *  client that reads /metrics after its answer always sees it. */
  finish() {
    Atomics.add(this.a, COMPLETED, 1n);
    Atomics.sub(this.a, IN_FLIGHT, 1n);
  }

  /** One more job waits for an offload thread (+1), or got one (-1). */
  queue(delta) {
    Atomics.add(this.a, QUEUED, BigInt(delta));
  }

  /** One backend call of `kind` ('sleep', 'http', 'pg', 'mc'). */
  call(kind) {
    Atomics.add(this.a, CALLS + KINDS.indexOf(kind), 1n);
  }

  /** Zero the counters, keeping the gauges (after a warm-up, with nothing in flight). */
  reset() {
    for (let i = COMPLETED; i < SLOTS; i++) Atomics.store(this.a, i, 0n);
  }

  /** A plain snapshot, with this process's live OS threads. */
  snapshot() {
    const n = (i) => Number(Atomics.load(this.a, i));
    return {
      inFlight: n(IN_FLIGHT),
      queued: n(QUEUED),
      completed: n(COMPLETED),
      rejected: n(REJECTED),
      calls: KINDS.map((_, k) => n(CALLS + k)),
      threads: liveThreads(),
    };
  }
}

/** Live OS threads of this process: the entries of /proc/self/task. */
function liveThreads() {
  try {
    return fs.readdirSync('/proc/self/task').length;
  } catch {
    return 0;
  }
}

/** The sum of several snapshots. */
function sum(snapshots) {
  const total = { inFlight: 0, queued: 0, completed: 0, rejected: 0, calls: KINDS.map(() => 0), threads: 0 };
  for (const s of snapshots) {
    for (const f of ['inFlight', 'queued', 'completed', 'rejected', 'threads']) total[f] += s[f];
    s.calls.forEach((c, k) => (total.calls[k] += c));
  }
  return total;
}

/** Prometheus text (format 0.0.4), with the Rust targets' names and help texts. */
function render(s) {
  let out = '';
  const metric = (name, type, help, value) => {
    out += `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}\n`;
  };
  metric('iolab_requests_in_flight', 'gauge', '/work requests executing now.', Math.max(0, s.inFlight));
  metric(
    'iolab_requests_queued',
    'gauge',
    'Requests (pool) or offload jobs (loop-offload) waiting for a thread.',
    Math.max(0, s.queued),
  );
  metric(
    'iolab_requests_completed_total',
    'counter',
    '/work requests answered, whatever the status, except overload rejections.',
    s.completed,
  );
  metric('iolab_requests_rejected_total', 'counter', 'Requests refused with 503 because no thread could be had.', s.rejected);
  metric('iolab_threads', 'gauge', "Live OS threads of the target's processes (/proc/PID/task).", s.threads);
  out += '# HELP iolab_backend_calls_total Backend calls made, by kind.\n# TYPE iolab_backend_calls_total counter\n';
  KINDS.forEach((kind, k) => (out += `iolab_backend_calls_total{kind="${kind}"} ${s.calls[k]}\n`));
  return out;
}

module.exports = { Counters, liveThreads, sum, render };
