'use strict';
// Each model's way of waiting, measured with real timing on real sockets. Margins are wide
// (the machine is shared): every bound separates two behaviours at least 2x apart.

const test = require('node:test');
const assert = require('node:assert/strict');
const { startTarget, get, metrics, concurrent, sleep } = require('./helpers');

async function withTarget(args, fn) {
  const t = await startTarget(['--model', ...args, '--port', '0', '--metrics-port', '0']);
  try {
    await fn(t);
  } finally {
    const { code } = await t.stop();
    assert.equal(code, 0, t.stderr());
  }
}

const allOk = (answers) => answers.forEach((a) => assert.equal(a.status, 200, a.text));

test('loop-async: timers hold no thread; concurrent requests and par() children overlap', () =>
  withTarget(['loop-async'], async (t) => {
    const { ms, answers } = await concurrent(t.url, '/work?steps=sleep:400', 8);
    allOk(answers);
    assert.ok(ms >= 395 && ms < 1600, `8 concurrent sleep:400 took ${ms} ms (serial: 3200)`);
    const par = await get(t.url, '/work?steps=par(sleep:400,sleep:400,sleep:400)');
    assert.ok(par.ms >= 395 && par.ms < 1000, `par of 3 x 400 took ${par.ms} ms (serial: 1200)`);
  }));

test('loop-blocking: Atomics.wait blocks the loop; requests and par() children serialise', () =>
  withTarget(['loop-blocking'], async (t) => {
    const pending = concurrent(t.url, '/work?steps=sleep:300', 4);
    await sleep(150);
    // The loop is blocked, but the supervisor's metrics port answers at once.
    const during = await get(t.metricsUrl, '/metrics');
    assert.ok(during.ms < 1000, `metrics port took ${during.ms} ms while the loop was blocked`);
    assert.match(during.text, /^iolab_requests_in_flight 1$/m);
    const { ms, answers } = await pending;
    allOk(answers);
    assert.ok(ms >= 1190, `4 concurrent sleep:300 took ${ms} ms (serialised: 1200)`);
    const par = await get(t.url, '/work?steps=par(sleep:300,sleep:300)');
    assert.ok(par.ms >= 595, `par of 2 x 300 took ${par.ms} ms (serialised: 600)`);
  }));

test('loop-offload: a pool of 4 threads serves 8 sleeps in two waves, the rest queued', () =>
  withTarget(['loop-offload', '--offload', '4'], async (t) => {
    const pending = concurrent(t.url, '/work?steps=sleep:500', 8);
    let queued = 0;
    for (let i = 0; i < 20 && queued === 0; i++) {
      await sleep(40);
      queued = (await metrics(t.metricsUrl)).iolab_requests_queued;
    }
    const { ms, answers } = await pending;
    allOk(answers);
    assert.ok(queued >= 1, 'jobs beyond the pool are counted as queued');
    assert.ok(ms >= 990 && ms < 1900, `8 x sleep:500 on 4 threads took ${ms} ms (2 waves: 1000; 1 thread: 4000)`);
    const par = await get(t.url, '/work?steps=par(sleep:500,sleep:500,sleep:500,sleep:500)');
    assert.ok(par.ms >= 495 && par.ms < 1500, `par of 4 x 500 took ${par.ms} ms (serial: 2000)`);
    assert.equal((await metrics(t.url)).iolab_requests_queued, 0);
  }));

test('loop-offload: iolab_threads counts the pool threads', async () => {
  const threads = async (n) => {
    let count;
    await withTarget(['loop-offload', '--offload', String(n)], async (t) => {
      count = (await metrics(t.url)).iolab_threads;
    });
    return count;
  };
  assert.equal((await threads(6)) - (await threads(1)), 5);
});

test('prefork: 2 processes serve 2 requests at a time; par() is serial in a process', () =>
  withTarget(['prefork', '--processes', '2'], async (t) => {
    const { ms, answers } = await concurrent(t.url, '/work?steps=sleep:500', 4);
    allOk(answers);
    answers.forEach((a) => assert.equal(a.headers.connection, 'close', 'one request per connection'));
    assert.ok(ms >= 990 && ms < 1850, `4 x sleep:500 on 2 processes took ${ms} ms (2 at a time: 1000; 1: 2000)`);
    const par = await get(t.url, '/work?steps=par(sleep:300,sleep:300)');
    assert.ok(par.ms >= 595, `par of 2 x 300 took ${par.ms} ms (serial: 600)`);
  }));

test('loop-async --processes 2: counters add up across the cluster workers', () =>
  withTarget(['loop-async', '--processes', '2'], async (t) => {
    const { answers } = await concurrent(t.url, '/work?steps=seq(sleep:20,sleep:20)', 12);
    allOk(answers);
    for (const url of [t.url, t.metricsUrl]) {
      const m = await metrics(url);
      assert.equal(m.iolab_requests_completed_total, 12);
      assert.equal(m['iolab_backend_calls_total{kind="sleep"}'], 24);
      assert.equal(m.iolab_requests_in_flight, 0);
    }
  }));
