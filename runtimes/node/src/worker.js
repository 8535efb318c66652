'use strict';
// A cluster worker: one process serving the contract under its model. The supervisor
// (supervisor.js) forked it with the validated settings in IOLAB_NODE_SETTINGS.

const http = require('http');
const path = require('path');
const { Worker } = require('worker_threads');
const { once } = require('events');
const { Counters } = require('./counters');
const { Backends } = require('./backends');
const { handler } = require('./server');
const { attachWebSocket } = require('./held');
const bridge = require('./bridge');
const { AsyncRunner, asyncLeaves } = require('./runners/async');
const { BlockingRunner } = require('./runners/blocking');
const { OffloadPool } = require('./offload-pool');

const settings = JSON.parse(process.env.IOLAB_NODE_SETTINGS);
const counters = new Counters();

/** A worker thread of this process, once it has said it is ready (its first message). */
async function thread(file, workerData) {
  const t = new Worker(path.join(__dirname, file), { workerData });
  const [first] = await Promise.race([once(t, 'message'), once(t, 'error').then(([e]) => Promise.reject(e))]);
  t.unref();
  return { thread: t, first };
}

/** The model's runner; models that wait synchronously get the io thread for http/pg/mc. */
async function runner() {
  if (settings.model === 'loop-async') return new AsyncRunner(counters, asyncLeaves(new Backends(settings)));
  const io = Backends.any(settings) ? (await thread('io-thread.js', { settings })).thread : null;
  const channel = () => {
    if (!io) return null;
    const c = bridge.channel();
    io.postMessage(c.server, [c.server.port]);
    return c;
  };
  if (settings.model === 'loop-offload') {
    const pool = new OffloadPool(settings.knobs.offload, counters, channel);
    return new AsyncRunner(counters, (leaf) => pool.run(leaf));
  }
  const c = channel();
  return new BlockingRunner(counters, c && bridge.caller(c.caller));
}

/** /metrics on the main port: the supervisor adds up every process's counters. */
const pending = new Map();
let seq = 0;
process.on('message', (m) => {
  if (m && m.type === 'metrics' && pending.has(m.id)) {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) p.reject(new Error(m.error));
    else p.resolve(m.text);
  }
});
const metrics = () =>
  new Promise((resolve, reject) => {
    pending.set(++seq, { resolve, reject });
    process.send({ type: 'metrics', id: seq });
  });

async function main() {
  const [stats, run] = await Promise.all([thread('stats-thread.js', { sab: counters.sab }), runner()]);
  const server = http.createServer(
    handler({
      model: settings.model,
      counters,
      runner: run,
      configured: (kind) => Backends.configured(settings, kind),
      metrics,
      // gunicorn's sync workers close each connection: the next request is a new accept,
      // taken by whichever process is free.
      closeEach: settings.model === 'prefork',
    }),
  );
  attachWebSocket(server, { runner: run, configured: (kind) => Backends.configured(settings, kind), counters });
  server.on('error', (e) => {
    process.stderr.write(`cannot serve on 127.0.0.1:${settings.port}: ${e.message}\n`);
    process.exit(1);
  });
  server.listen({ port: settings.port, host: '127.0.0.1' }, () => {
    process.send({ type: 'ready', port: server.address().port, statsPort: stats.first.port });
  });
}

// Without its supervisor a worker has no purpose (and nobody would stop it).
process.on('disconnect', () => process.exit(0));
main().catch((e) => {
  process.stderr.write(`worker ${process.pid}: ${e.stack || e}\n`);
  process.exit(1);
});
