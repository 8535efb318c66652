'use strict';
// One worker process's HTTP handler: the contract's three paths around the model's runner.

const A = require('./answers');
const { route, planWork } = require('./route');
const { leafCount } = require('./steps');
const held = require('./held');

function send(res, status, type, body) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * The request handler. `runner.run(step)` returns the last mc value (or a Promise of it);
 * `configured(kind)` says which backends are reachable; `metrics()` is a Promise of the
 * whole target's /metrics text; `closeEach` answers every request with Connection: close.
 */
function handler({ model, counters, runner, configured, metrics, closeEach }) {
  return async function handle(req, res) {
    if (closeEach) res.setHeader('Connection', 'close');
    const r = route(req.method, req.url);
    switch (r.kind) {
      case 'health':
        return send(res, 200, A.JSON_TYPE, `{"ok":true,"model":"${model}"}`);
      case 'metrics':
        try {
          return send(res, 200, A.PROMETHEUS, await metrics());
        } catch (e) {
          return send(res, 500, A.JSON_TYPE, A.error(`metrics: ${e.message}`));
        }
      case 'notFound':
        return send(res, 404, A.JSON_TYPE, A.error(A.notFound(r.path)));
      case 'ws':
        // An upgrade went to the server's 'upgrade' listener (held.js); this GET had none.
        return send(res, 400, A.JSON_TYPE, A.error('GET /ws needs Upgrade: websocket and Sec-WebSocket-Key'));
      case 'events':
        return held.events(r.query, res);
      case 'method':
        return send(res, 405, A.JSON_TYPE, A.error(A.methodNotAllowed(r.method)));
      default:
        return work(r.query);
    }

    async function work(query) {
      const t0 = performance.now();
      counters.start();
      let status = 200;
      let type = A.JSON_TYPE;
      let body;
      try {
        const { step, value } = planWork(query, configured, (kind) => counters.call(kind));
        const fetched = await runner.run(step);
        if (value) {
          type = A.OCTET_STREAM;
          body = fetched;
        } else {
          body = A.ok(model, leafCount(step), performance.now() - t0);
        }
      } catch (e) {
        status = e instanceof A.WorkError ? e.status : 500;
        body = A.error(e instanceof A.WorkError ? e.message : `internal error: ${e.message}`);
        type = A.JSON_TYPE;
        if (!(e instanceof A.WorkError)) process.stderr.write(`${e.stack}\n`);
      }
      counters.finish();
      send(res, status, type, body);
    }
  };
}

module.exports = { handler };
