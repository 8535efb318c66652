'use strict';
// `--warmup N`: the target sends itself N small /work requests before it prints its URL,
// so V8 has optimised the request path before anything is measured (Node's JIT warms in
// a few thousand calls, much faster than the JVM's), then the counters are zeroed.

const http = require('http');

/** Connections sending at once: several, so every cluster worker gets a share. */
const CLIENTS = 16;

const PATHS = ['/work?steps=sleep:1', '/work?steps=seq(sleep:1,cpu:100)', '/work?steps=par(sleep:1,sleep:1)'];

function get(agent, port, urlPath) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent, timeout: 30000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
  });
}

/** Send `n` requests to 127.0.0.1:port from CLIENTS connections; the number that failed. */
async function warmup(port, n) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  let next = 0;
  let failed = 0;
  const client = async () => {
    while (next < n) {
      const i = next++;
      if ((await get(agent, port, PATHS[i % PATHS.length])) !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  for (const p of ['/health', '/metrics', '/nope']) await get(agent, port, p);
  agent.destroy();
  return failed;
}

module.exports = { warmup };
