'use strict';
// The launcher protocol (runtimes/README.md): bad flags are one line and exit 2; stdout is
// the URL (and the metrics line); --warmup zeroes the counters; SIGTERM stops every
// process within 10 s with exit 0, even while loops are blocked.

const test = require('node:test');
const assert = require('node:assert/strict');
const { startTarget, runLauncher, bareEnv, get, metrics, alive, children, sleep } = require('./helpers');

const FAULTS = [
  [[], /^error: missing --model/],
  [['--model', 'pool'], /^error: unknown model 'pool'/],
  [['--model', 'loop-async', '--offload', '4'], /^error: --offload does not apply to model 'loop-async'/],
  [['--model', 'loop-blocking', '--processes', '2'], /^error: --processes does not apply to model 'loop-blocking'/],
  [['--model', 'loop-offload', '--threads', '8'], /^error: --threads does not apply/],
  [['--model', 'prefork', '--port', 'x'], /^error: --port must be a whole number/],
  [['--model', 'loop-async', '--http-backend', 'https://x'], /^error: --http-backend 'https:\/\/x' is not an http:\/\/ URL/],
  [['--model', 'loop-async', '--bogus', '1'], /^error: unknown flag --bogus/],
  [['--model', 'loop-async', '--warmup', '-1'], /^error: --warmup must be a whole number/],
];

for (const [args, want] of FAULTS) {
  test(`bad launch is one line and exit 2: ${args.join(' ') || '(no flags)'}`, async () => {
    const { code, stdout, stderr } = await runLauncher(args);
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, want);
    assert.equal(stderr.trimEnd().split('\n').length, 1, stderr);
  });
}

test('a bad backend address in the environment is refused the same way', async () => {
  const { code, stderr } = await runLauncher(['--model', 'loop-async'], bareEnv({ IOLAB_PG: 'mysql://x' }));
  assert.equal(code, 2);
  assert.match(stderr, /^error: --pg 'mysql:\/\/x' \(from IOLAB_PG\) is not a PostgreSQL URL/);
});

test('stdout: the URL, then the metrics line; 404 and 405 texts are the contract bytes', async () => {
  const t = await startTarget(['--model', 'loop-async', '--port', '0', '--metrics-port', '0']);
  try {
    assert.match(t.lines[0], /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(t.lines[1], /^metrics http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(t.lines.length, 2);
    const nope = await get(t.url, '/nope');
    assert.equal(nope.status, 404);
    assert.equal(nope.text, '{"ok":false,"error":"no such path \'/nope\' (the contract has /work?steps=..., /health, /metrics)"}');
    const post = await get(t.url, '/work?steps=sleep:1', { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.text, '{"ok":false,"error":"method POST not allowed (use GET)"}');
  } finally {
    await t.stop();
  }
});

test('--warmup N: the requests are sent before the URL, then the counters are zeroed', async () => {
  const t = await startTarget(['--model', 'loop-offload', '--port', '0', '--warmup', '300']);
  try {
    assert.match(t.stderr(), /warm-up: 300 requests in \d+ ms \(0 failed\), counters zeroed/);
    const m = await metrics(t.url);
    assert.equal(m.iolab_requests_completed_total, 0);
    assert.equal(m['iolab_backend_calls_total{kind="sleep"}'], 0);
  } finally {
    await t.stop();
  }
});

for (const args of [['loop-blocking'], ['prefork', '--processes', '2'], ['loop-offload', '--offload', '2']]) {
  test(`SIGTERM stops ${args.join(' ')} and every process it started, blocked or not`, async () => {
    const t = await startTarget(['--model', ...args, '--port', '0']);
    const workers = children(t.proc.pid);
    assert.ok(workers.length >= 1, 'the supervisor has worker processes');
    // Block every worker in a long wait.
    const blocked = [1, 2, 3].map(() => get(t.url, '/work?steps=sleep:60000', { timeoutMs: 70000 }).catch(() => null));
    await sleep(300);
    const { code, signal, ms } = await t.stop();
    assert.equal(code, 0, `exit code (signal ${signal}); stderr: ${t.stderr()}`);
    assert.ok(ms < 10000, `stopped in ${ms} ms`);
    for (const pid of workers) assert.ok(!alive(pid), `worker ${pid} is gone`);
    await Promise.all(blocked);
  });
}

test('SIGTERM to the whole process group (workers die first) is still a clean stop', async () => {
  for (let i = 0; i < 3; i++) {
    const t = await startTarget(['--model', 'prefork', '--processes', '2', '--port', '0'], { group: true });
    const { code, signal } = await t.stop();
    assert.equal(code, 0, `exit code (signal ${signal}); stderr: ${t.stderr()}`);
  }
});
