'use strict';
// vectors/contract.json against every model, each started through the launcher as iolab
// starts it: every answer judged as `iolab verify` judges it, then the /metrics accounting
// (completed and sleep calls moved by exactly what was sent, nothing left in flight), and
// SIGTERM ends it with exit code 0. Backends come from IOLAB_PG / IOLAB_MC /
// IOLAB_HTTP_BACKEND when set (scripts/services up); without them the vectors expect the
// 'not configured' answers.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('path');
const { startTarget, get, metrics, bareEnv } = require('./helpers');
const { judge, expectation, contractShaped } = require('./judge');
const steps = require('../src/steps');
const { percentDecode } = require('../src/route');

const vectors = require(path.join(__dirname, '../../../vectors/contract.json'));

const BACKENDS = { pg: 'IOLAB_PG', mc: 'IOLAB_MC', http: 'IOLAB_HTTP_BACKEND' };
const configured = (kind) => Boolean(process.env[BACKENDS[kind]]);
const env = bareEnv(Object.fromEntries(Object.values(BACKENDS).filter((k) => process.env[k]).map((k) => [k, process.env[k]])));

const TARGETS = [
  ['loop-async'],
  ['loop-async', '--processes', '2'],
  ['loop-blocking'],
  ['loop-offload'],
  ['prefork', '--processes', '2'],
];

/** Sleep leaves of a /work path: what follows `steps=` parsed whole, as `iolab verify` counts
 *  (0 when it does not parse: those requests are refused before any step runs). */
function sleeps(p) {
  const m = p.match(/steps=(.*)$/);
  if (!m) return 0;
  try {
    const count = (s) => (s.t === 'io' ? Number(s.kind === 'sleep') : s.t === 'cpu' ? 0 : s.children.reduce((n, c) => n + count(c), 0));
    return count(steps.parse(percentDecode(m[1])));
  } catch {
    return 0;
  }
}

for (const args of TARGETS) {
  const [model] = args;
  test(`contract vectors: ${args.join(' ')}`, async (t) => {
    const target = await startTarget(['--model', ...args, '--port', '0'], { env });
    try {
      const before = await metrics(target.url);
      let work = 0;
      let sleepCalls = 0;
      for (const c of vectors.cases) {
        if (c.path.startsWith('/work')) {
          work++;
          sleepCalls += sleeps(c.path);
        }
        await t.test(c.name, async () => {
          const resp = await get(target.url, c.path);
          const expect = expectation(c, configured);
          if (expect) judge(expect, resp, model);
          else contractShaped(resp);
        });
      }
      const after = await metrics(target.url);
      assert.equal(after.iolab_requests_completed_total - before.iolab_requests_completed_total, work, 'completed_total');
      const sleepSeries = 'iolab_backend_calls_total{kind="sleep"}';
      assert.equal(after[sleepSeries] - before[sleepSeries], sleepCalls, 'sleep calls');
      assert.equal(after.iolab_requests_in_flight, 0, 'nothing in flight');
      assert.ok(after.iolab_threads >= 3, 'threads of every process');
    } finally {
      const { code, ms } = await target.stop();
      assert.equal(code, 0, `exit code after SIGTERM; stderr: ${target.stderr()}`);
      assert.ok(ms < 10000, `stopped in ${ms} ms`);
    }
  });
}
