'use strict';
// Judging one answer against a vectors/contract.json expectation, as `iolab verify` does.

const assert = require('node:assert/strict');

/** Assert `resp` meets `expect` for a target serving `model`. */
function judge(expect, resp, model) {
  const short = resp.text.slice(0, 200);
  assert.equal(resp.status, expect.status, `status (body: ${short})`);
  if (expect.content_type) assert.ok(resp.type.startsWith(expect.content_type), `Content-Type ${resp.type}`);
  if (expect.body) {
    const json = JSON.parse(resp.text);
    for (const [field, want] of Object.entries(expect.body)) {
      assert.deepEqual(json[field], want === '$model' ? model : want, `field ${field} of ${short}`);
    }
  }
  for (const needle of expect.body_contains || []) assert.ok(resp.text.includes(needle), `body lacks ${needle}: ${short}`);
  if (expect.min_ms !== undefined) assert.ok(resp.ms >= expect.min_ms, `took ${resp.ms} ms < ${expect.min_ms}`);
  if (expect.max_ms !== undefined) assert.ok(resp.ms <= expect.max_ms, `took ${resp.ms} ms > ${expect.max_ms}`);
}

/** The answer a case must get: `expect`, or `unconfigured` when its backend is absent; null: any contract-shaped answer. */
function expectation(c, configured) {
  if (!c.needs) return c.expect;
  return configured(c.needs) ? c.expect || null : c.unconfigured;
}

/** Any answer in the contract's shape (a configured backend with nothing fixed to expect). */
function contractShaped(resp) {
  const json = JSON.parse(resp.text);
  assert.ok((resp.status === 200 && json.ok === true) || (resp.status >= 400 && json.ok === false), resp.text);
}

module.exports = { judge, expectation, contractShaped };
