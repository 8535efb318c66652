'use strict';
// src/held.js: the /events interval is read as iolab reads durations (crates/model units.rs).

const test = require('node:test');
const assert = require('node:assert/strict');
const { durationMs } = require('../src/held');

test('durations as iolab writes them', () => {
  assert.equal(durationMs('100ms'), 100);
  assert.equal(durationMs('1s'), 1000);
  assert.equal(durationMs('1m30s'), 90_000);
  assert.equal(durationMs('2min'), 120_000);
  assert.equal(durationMs('250us'), 0.25);
  assert.equal(durationMs('1.5s'), 1500);
  for (const bad of ['', '100', 'ms', '1x', '1 s', '8d', '1mins']) assert.equal(durationMs(bad), undefined, bad);
  assert.equal(durationMs('200h'), undefined, 'over a week');
});
