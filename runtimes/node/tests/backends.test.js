'use strict';
// The http, pg and mc clients against the real servers of `scripts/services up`
// (IOLAB_HTTP_BACKEND, IOLAB_PG, IOLAB_MC): each model's way of waiting on them, the pools'
// caps, body=value's bytes, and the error answers. Without a backend its tests skip,
// unless IOLAB_REQUIRE_BACKENDS=1 makes that a failure.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('crypto');
const { startTarget, get, concurrent, bareEnv, backend, mcSet, mcStat } = require('./helpers');

const HTTP = backend('IOLAB_HTTP_BACKEND');
const PG = backend('IOLAB_PG');
const MC = backend('IOLAB_MC');

async function withTarget(args, env, fn) {
  const t = await startTarget(['--model', ...args, '--port', '0'], { env: bareEnv(env) });
  try {
    await fn(t);
  } finally {
    const { code } = await t.stop();
    assert.equal(code, 0, t.stderr());
  }
}

const ok = (a) => assert.equal(a.status, 200, a.text);

for (const [kind, url, envName] of [
  ['http', HTTP, 'IOLAB_HTTP_BACKEND'],
  ['pg', PG, 'IOLAB_PG'],
]) {
  const env = { [envName]: url };
  test(`${kind}: par() overlaps on loop-async and loop-offload, serialises on loop-blocking`, { skip: !url && `${envName} not set` }, async () => {
    const p = `/work?steps=par(${kind}:400,${kind}:400,${kind}:400)`;
    for (const model of ['loop-async', 'loop-offload']) {
      await withTarget([model], env, async (t) => {
        await get(t.url, `/work?steps=par(${kind}:1,${kind}:1,${kind}:1)`); // connections made
        const a = await get(t.url, p);
        ok(a);
        assert.ok(a.ms >= 395 && a.ms < 1000, `${model}: par of 3 x ${kind}:400 took ${a.ms} ms (serial: 1200)`);
      });
    }
    await withTarget(['loop-blocking'], env, async (t) => {
      const a = await get(t.url, p);
      ok(a);
      assert.ok(a.ms >= 1190, `loop-blocking: par of 3 x ${kind}:400 took ${a.ms} ms (serial: 1200)`);
    });
  });
}

test('pg: the pool caps concurrent queries and times out waiting for a connection', { skip: !PG && 'IOLAB_PG not set' }, async () => {
  await withTarget(['loop-async', '--pg-pool', '1'], { IOLAB_PG: PG }, async (t) => {
    const a = await get(t.url, '/work?steps=par(pg:300,pg:300,pg:300)');
    ok(a);
    assert.ok(a.ms >= 890, `3 x pg:300 on one connection took ${a.ms} ms (serial: 900)`);
  });
  await withTarget(['loop-offload', '--pg-pool', '1', '--pg-wait', '100'], { IOLAB_PG: PG }, async (t) => {
    const a = await get(t.url, '/work?steps=par(pg:800,pg:800)');
    assert.equal(a.status, 503);
    assert.equal(a.text, '{"ok":false,"error":"backend \'pg\' pool timeout after 100 ms"}');
  });
});

test('mc: body=value answers the 1,024,000-byte value in every model', { skip: !MC && 'IOLAB_MC not set' }, async () => {
  const key = `iolab-node-test-${process.pid}`;
  const value = crypto.randomBytes(1024000);
  await mcSet(MC, key, value);
  for (const args of [['loop-async'], ['loop-blocking'], ['loop-offload'], ['prefork', '--processes', '2']]) {
    await withTarget(args, { IOLAB_MC: MC }, async (t) => {
      const a = await get(t.url, `/work?steps=seq(sleep:1,mc:${key})&body=value`);
      ok(a);
      assert.equal(a.type, 'application/octet-stream');
      assert.ok(a.body.equals(value), `${args[0]}: the exact bytes`);
      const json = await get(t.url, `/work?steps=mc:${key}`);
      assert.match(json.text, /^\{"ok":true,"model":"[a-z-]+","steps":1,"elapsed_ms":[0-9.]+\}$/);
      const miss = await get(t.url, `/work?steps=mc:${key}-absent&body=value`);
      assert.equal(miss.status, 502);
      assert.equal(
        miss.text,
        `{"ok":false,"error":"backend 'mc': key '${key}-absent' not found (store it with \`iolab backend mc-fill --key ${key}-absent\`)"}`,
      );
    });
  }
});

test('mc: mc_pool is the number of connections; gets spread over them (E4 faithful and corrected)', { skip: !MC && 'IOLAB_MC not set' }, async () => {
  const key = `iolab-node-pool-${process.pid}`;
  await mcSet(MC, key, Buffer.alloc(100000, 7));
  for (const [args, want] of [
    [['loop-async'], 1],
    [['loop-async', '--mc-pool', '3'], 3],
    [['loop-offload', '--mc-pool', '2'], 2],
  ]) {
    await withTarget(args, { IOLAB_MC: MC }, async (t) => {
      const before = await mcStat(MC, 'total_connections');
      const { answers } = await concurrent(t.url, `/work?steps=par(mc:${key},mc:${key},mc:${key})`, 6);
      answers.forEach(ok);
      // Less the one `stats` itself opens.
      const made = (await mcStat(MC, 'total_connections')) - before - 1;
      assert.equal(made, want, `${args.join(' ')}: connections made for 18 gets`);
    });
  }
});

test('a backend that is down is a 503 naming it, not a crash', async () => {
  const env = { IOLAB_MC: '127.0.0.1:1', IOLAB_PG: 'postgres://iolab@127.0.0.1:1/iolab', IOLAB_HTTP_BACKEND: 'http://127.0.0.1:1' };
  for (const model of ['loop-async', 'loop-blocking']) {
    await withTarget([model], env, async (t) => {
      for (const kind of ['mc', 'pg', 'http']) {
        const step = kind === 'mc' ? 'mc:k' : `${kind}:1`;
        const a = await get(t.url, `/work?steps=${step}`);
        assert.equal(a.status, 503, a.text);
        assert.match(JSON.parse(a.text).error, new RegExp(`^backend '${kind}' unavailable: .*ECONNREFUSED`));
      }
      ok(await get(t.url, '/work?steps=sleep:1'));
    });
  }
});
