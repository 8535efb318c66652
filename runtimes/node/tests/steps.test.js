'use strict';
// vectors/steps.json against the parser: every canonical form, leaf count and error text.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('path');
const steps = require('../src/steps');

const vectors = require(path.join(__dirname, '../../../vectors/steps.json'));

for (const c of vectors.cases) {
  test(`steps vector ${JSON.stringify(c.input).slice(0, 60)}`, () => {
    if (c.error !== undefined) {
      assert.throws(() => steps.parse(c.input), (e) => e instanceof steps.StepsError && e.message === c.error);
    } else {
      const s = steps.parse(c.input);
      assert.equal(steps.canonical(s), c.canonical);
      assert.equal(steps.leafCount(s), c.leaves);
      assert.deepEqual(steps.parse(steps.canonical(s)), s, 'canonical text parses back to the same step');
    }
  });
}

test('limits: leaves, key length, input length, multibyte positions', () => {
  const many = Array.from({ length: 1001 }, () => 'cpu:1').join(',');
  assert.throws(() => steps.parse(many), { message: `steps: more than 1000 steps at ${1000 * 6}` });
  assert.throws(() => steps.parse(`mc:${'k'.repeat(251)}`), { message: 'steps: memcached key longer than 250 bytes at 3' });
  assert.throws(() => steps.parse('x'.repeat(16385)), { message: 'steps: input longer than 16384 bytes at 16384' });
  // Positions are UTF-8 byte offsets, as in Rust: 'é' is two bytes.
  assert.throws(() => steps.parse('sleep:1,é'), { message: "steps: expected a step, found 'é' at 8" });
  assert.throws(() => steps.parse('sleep:1é'), { message: "steps: unexpected 'é' at 7" });
});
