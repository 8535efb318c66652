'use strict';
// The launcher's process: a cluster primary that forks the model's worker processes and
// supervises them. It prints the URL once every worker listens (after any warm-up), adds
// up their counters for /metrics, serves --metrics-port itself (a blocked worker cannot
// starve it), and on SIGTERM/SIGINT stops every worker and exits 0.

const cluster = require('cluster');
const http = require('http');
const path = require('path');
const { metricsText, resetAll } = require('./aggregate');
const { warmup } = require('./warmup');
const { PROMETHEUS } = require('./answers');

const START_TIMEOUT_MS = 60000;
const STOP_GRACE_MS = 3000;

const log = (msg) => process.stderr.write(`iolab-node: ${msg}\n`);

/** Worker processes for `settings`: `processes` of them where the model has that knob, else one. */
function workerCount(settings) {
  return settings.knobs.processes || 1;
}

function start(settings) {
  const n = workerCount(settings);
  // Round-robin (Node's default on Linux: the primary accepts and hands each connection to
  // the next worker whose loop took the last one) wherever there are workers to share
  // among; a single loop listens itself, so its accept queue is the kernel's, as for a
  // plain `node server.js`.
  cluster.schedulingPolicy = n > 1 || settings.model === 'prefork' ? cluster.SCHED_RR : cluster.SCHED_NONE;
  cluster.setupPrimary({
    exec: path.join(__dirname, 'worker.js'),
    args: [],
    // stdout is the launcher protocol's: a worker's stray output goes to stderr.
    stdio: ['ignore', 2, 2, 'ipc'],
  });

  let stopping = false;
  let metricsServer = null;
  const statsPorts = [];

  const stop = (code) => {
    if (stopping) return;
    stopping = true;
    if (metricsServer) metricsServer.close();
    const alive = () => Object.values(cluster.workers).filter((w) => w && !w.isDead());
    // Workers install no SIGTERM handler: the signal ends them at once, even blocked in Atomics.wait.
    alive().forEach((w) => w.process.kill('SIGTERM'));
    const deadline = Date.now() + STOP_GRACE_MS;
    const check = () => {
      const left = alive();
      if (left.length === 0) process.exit(code);
      if (Date.now() > deadline) left.forEach((w) => w.process.kill('SIGKILL'));
      setTimeout(check, 20);
    };
    check();
  };
  process.on('SIGTERM', () => stop(0));
  process.on('SIGINT', () => stop(0));

  const aggregate = () => metricsText(statsPorts);

  cluster.on('message', (worker, m) => {
    if (m && m.type === 'metrics') {
      aggregate().then(
        (text) => worker.send({ type: 'metrics', id: m.id, text }),
        (e) => worker.send({ type: 'metrics', id: m.id, error: e.message }),
      );
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    // A SIGTERM/SIGINT sent to the whole process group may reach a worker first: a stop, not a crash.
    if (signal === 'SIGTERM' || signal === 'SIGINT') return stop(0);
    log(`worker ${worker.process.pid} exited (${signal || code}): stopping the target`);
    stop(1);
  });

  const ready = new Promise((resolve, reject) => {
    let port = null;
    let left = n;
    const timer = setTimeout(() => reject(new Error(`workers not listening after ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    cluster.on('message', (worker, m) => {
      if (!m || m.type !== 'ready') return;
      port = m.port;
      statsPorts.push(m.statsPort);
      if (--left === 0) {
        clearTimeout(timer);
        resolve(port);
      }
    });
  });
  for (let i = 0; i < n; i++) {
    cluster.fork({ IOLAB_NODE_SETTINGS: JSON.stringify(settings) });
  }

  (async () => {
    const port = await ready;
    let metricsUrl = null;
    if (settings.metricsPort !== null) {
      metricsServer = http.createServer((req, res) => {
        if (req.url !== '/metrics') return res.writeHead(404).end();
        aggregate().then(
          (text) => res.writeHead(200, { 'Content-Type': PROMETHEUS }).end(text),
          (e) => res.writeHead(500).end(e.message),
        );
      });
      await new Promise((resolve, reject) => {
        metricsServer.once('error', reject);
        metricsServer.listen(settings.metricsPort, '127.0.0.1', resolve);
      });
      metricsUrl = `http://127.0.0.1:${metricsServer.address().port}`;
    }
    if (settings.warmup > 0) {
      const t0 = Date.now();
      const failed = await warmup(port, settings.warmup);
      await resetAll(statsPorts);
      log(`warm-up: ${settings.warmup} requests in ${Date.now() - t0} ms (${failed} failed), counters zeroed`);
    }
    if (stopping) return;
    process.stdout.write(`http://127.0.0.1:${port}\n`);
    if (metricsUrl) process.stdout.write(`metrics ${metricsUrl}\n`);
  })().catch((e) => {
    log(`cannot start: ${e.message}`);
    stop(1);
  });
}

module.exports = { start };
