'use strict';
// The pieces under the servers: query decoding, answer bytes, flags, counters.

const test = require('node:test');
const assert = require('node:assert/strict');
const os = require('os');
const { percentDecode, planWork, route } = require('../src/route');
const A = require('../src/answers');
const { parseSettings, UsageError } = require('../src/settings');
const { Counters, render, sum } = require('../src/counters');

test('query decoding: %XX, +, the Rust texts for bad escapes and bad UTF-8', () => {
  assert.equal(percentDecode('par%28sleep%3A10%2Csleep%3A10%29'), 'par(sleep:10,sleep:10)');
  assert.equal(percentDecode('a+b'), 'a b');
  assert.equal(percentDecode('%C3%A9'), 'é');
  assert.throws(() => percentDecode('ab%2'), {
    message: 'bad percent-encoding in query at 2: expected %XX with two hex digits',
  });
  assert.throws(() => percentDecode('%ff'), { message: 'query is not UTF-8 after percent-decoding' });
});

test('routes and the order of /work checks', () => {
  assert.deepEqual(route('GET', '/health'), { kind: 'health' });
  assert.deepEqual(route('POST', '/health'), { kind: 'method', method: 'POST' });
  assert.deepEqual(route('GET', '/work/'), { kind: 'notFound', path: '/work/' });
  const all = () => true;
  const none = (k) => k === 'sleep';
  const booked = [];
  const book = (k) => booked.push(k);
  assert.throws(() => planWork(undefined, all, book), { message: A.MISSING_STEPS });
  assert.throws(() => planWork('steps', all, book), { message: A.MISSING_STEPS });
  assert.throws(() => planWork('stepsx=1&steps=nap:1', all, book), { message: /unknown step 'nap'/ });
  assert.equal(planWork('body=value&steps=mc:a', all, book).value, true);
  assert.equal(planWork('steps=mc:a&bodyx=value', all, book).value, false);
  assert.throws(() => planWork('steps=sleep:1&body=value', all, book), { message: A.VALUE_NEEDS_MC });
  assert.throws(() => planWork('steps=seq(sleep:1,pg:1)', none, book), {
    message: "backend 'pg' not configured: start the target with --pg URL (see `iolab serve --help`)",
  });
  assert.deepEqual(booked, ['pg'], 'the refused call is booked as the other targets book it');
});

test('answer bytes match the Rust targets', () => {
  assert.equal(A.ok('pool', 3, 12.3), '{"ok":true,"model":"pool","steps":3,"elapsed_ms":12.300}');
  assert.equal(A.error("steps: expected ')' at 21"), '{"ok":false,"error":"steps: expected \')\' at 21"}');
  assert.equal(A.error('a"b\\c\nd\u0001'), '{"ok":false,"error":"a\\"b\\\\c\\nd\\u0001"}');
  assert.equal(A.notFound('/nope'), "no such path '/nope' (the contract has /work?steps=..., /health, /metrics)");
  assert.equal(A.methodNotAllowed('POST'), 'method POST not allowed (use GET)');
  const chained = new Error('outer', { cause: Object.assign(new Error(''), { code: 'ECONNREFUSED' }) });
  assert.equal(A.causes(chained), 'outer: ECONNREFUSED');
});

test('flags: defaults, environment fallback, one-line faults', () => {
  const s = parseSettings(['--model', 'loop-offload'], {});
  assert.deepEqual(s.knobs, { offload: 4, mc_pool: 1, pg_pool: 10 });
  assert.equal(s.port, 0);
  assert.equal(parseSettings(['--model=prefork'], {}).knobs.processes, os.availableParallelism());
  assert.equal(parseSettings(['--model', 'loop-async'], {}).knobs.processes, 1);
  const env = { IOLAB_MC: '127.0.0.1:11211', IOLAB_PG: 'postgres://u@h:5/d' };
  const b = parseSettings(['--model', 'loop-async', '--mc', 'localhost:1'], env);
  assert.equal(b.mc.addr, 'localhost:1', 'a flag beats the environment');
  assert.equal(b.pg, 'postgres://u@h:5/d');
  const fault = (argv, re, e = {}) => assert.throws(() => parseSettings(argv, e), (x) => x instanceof UsageError && re.test(x.message));
  fault([], /missing --model/);
  fault(['--model', 'pool'], /unknown model 'pool' for the node runtime/);
  fault(['--model', 'loop-async', '--offload', '2'], /--offload does not apply to model 'loop-async'/);
  fault(['--model', 'loop-blocking', '--threads', '2'], /--threads does not apply.*takes: --mc-pool, --pg-pool/);
  fault(['--model', 'prefork', '--processes', '0'], /--processes must be a whole number in 1..4096, got '0'/);
  fault(['--model', 'loop-async', '--pg', 'mysql://x'], /--pg 'mysql:\/\/x' is not a PostgreSQL URL/);
  fault(['--model', 'loop-async'], /--mc 'x' \(from IOLAB_MC\) is not HOST:PORT/, { IOLAB_MC: 'x' });
  fault(['--model', 'loop-async', '--nope', '1'], /unknown flag --nope/);
  fault(['--model', 'loop-async', '--port'], /--port needs a value/);
});

test('counters: booked with Atomics, summed across processes, rendered', () => {
  const c = new Counters();
  c.start();
  c.call('sleep');
  c.call('mc');
  c.queue(1);
  const one = c.snapshot();
  assert.equal(one.inFlight, 1);
  c.finish();
  c.queue(-1);
  const shared = new Counters(c.sab); // what the stats thread sees
  const s = shared.snapshot();
  assert.deepEqual([s.inFlight, s.queued, s.completed, s.calls], [0, 0, 1, [1, 0, 0, 1]]);
  const text = render(sum([s, s]));
  assert.match(text, /^iolab_requests_completed_total 2$/m);
  assert.match(text, /^iolab_backend_calls_total\{kind="mc"\} 2$/m);
  c.reset();
  assert.equal(shared.snapshot().completed, 0);
});

test('lease: FIFO hand-over and a bounded wait', async () => {
  const { Lease } = require('../src/backends/lease');
  const lease = new Lease(1);
  await lease.acquire(10);
  const order = [];
  const a = lease.acquire(1000).then(() => order.push('a'));
  const b = lease.acquire(1000).then(() => order.push('b'));
  await assert.rejects(lease.acquire(20), (e) => e.timedOut === true);
  lease.release();
  await a;
  lease.release();
  await b;
  assert.deepEqual(order, ['a', 'b']);
  lease.release();
  assert.equal(lease.free, 1);
});
