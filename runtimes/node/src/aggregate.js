'use strict';
// The supervisor's view of all its workers' counters: each worker's stats thread answers on
// a loopback port of its own, and the sums are the target's /metrics.

const http = require('http');
const { liveThreads, sum, render } = require('./counters');

const agent = new http.Agent({ keepAlive: true });

/** One request to a stats thread: the parsed JSON answer (or null for 204). */
function ask(port, urlPath, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, method, agent, timeout: 5000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode === 204) return resolve(null);
        if (res.statusCode !== 200) return reject(new Error(`stats thread answered ${res.statusCode}`));
        resolve(JSON.parse(Buffer.concat(chunks).toString()));
      });
    });
    req.on('timeout', () => req.destroy(new Error('stats thread did not answer within 5 s')));
    req.on('error', reject);
    req.end();
  });
}

/** The /metrics text of the whole target: every worker's counters, and every process's threads. */
async function metricsText(statsPorts) {
  const snapshots = await Promise.all(statsPorts.map((p) => ask(p, '/counters')));
  const total = sum(snapshots);
  total.threads += liveThreads(); // the supervisor's own
  return render(total);
}

/** Zero every worker's counters (after the warm-up). */
async function resetAll(statsPorts) {
  await Promise.all(statsPorts.map((p) => ask(p, '/reset', 'POST')));
}

module.exports = { metricsText, resetAll };
