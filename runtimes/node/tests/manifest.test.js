'use strict';
// runtime.toml tells iolab the same models, knobs and defaults as src/models.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const { MODELS } = require('../src/models');

/** The [models.*] tables of runtime.toml: knobs and defaults (this file's simple shapes only). */
function manifestModels() {
  const text = fs.readFileSync(path.join(__dirname, '..', 'runtime.toml'), 'utf8');
  const out = {};
  let cur = null;
  for (const line of text.split('\n')) {
    const table = line.match(/^\[models\.([a-z-]+)\]/);
    if (table) out[(cur = table[1])] = { knobs: [], defaults: {} };
    else if (/^\[/.test(line)) cur = null;
    if (!cur) continue;
    const knobs = line.match(/^knobs = \[(.*)\]/);
    if (knobs) out[cur].knobs = [...knobs[1].matchAll(/"([a-z_]+)"/g)].map((m) => m[1]);
    const defaults = line.match(/^defaults = \{(.*)\}/);
    if (defaults) {
      for (const m of defaults[1].matchAll(/([a-z_]+) = ([0-9]+)/g)) out[cur].defaults[m[1]] = Number(m[2]);
    }
  }
  return out;
}

test('runtime.toml and src/models.js agree', () => {
  const manifest = manifestModels();
  assert.deepEqual(Object.keys(manifest).sort(), Object.keys(MODELS).sort());
  for (const [name, spec] of Object.entries(MODELS)) {
    assert.deepEqual(manifest[name].knobs, spec.knobs, `${name} knobs`);
    // `cores` depends on the machine: the manifest leaves it to the launcher.
    const numeric = Object.fromEntries(Object.entries(spec.defaults).filter(([, v]) => typeof v === 'number'));
    // A default of a knob the model does not take is a fact of Node for predictions, not a
    // flag: one event-loop thread per process, server.listen's backlog of 511.
    const facts = { workers: 1, backlog: 511 };
    const taken = Object.fromEntries(Object.entries(manifest[name].defaults).filter(([k, v]) => {
      if (spec.knobs.includes(k)) return true;
      assert.equal(v, facts[k], `${name}: ${k} = ${v} is neither a knob of the model nor a fact of Node`);
      return false;
    }));
    assert.deepEqual(taken, numeric, `${name} defaults`);
  }
});
