'use strict';
// The contract's answers, byte-compatible with crates/servers/src/routes.rs: JSON written
// by hand so field order and number format match the Rust targets exactly.

const JSON_TYPE = 'application/json';
const OCTET_STREAM = 'application/octet-stream';
const PROMETHEUS = 'text/plain; version=0.0.4';

const MISSING_STEPS = "missing query parameter 'steps', e.g. /work?steps=sleep:100";
const VALUE_NEEDS_MC =
  'body=value answers the value of the last mc step, but steps has none: e.g. /work?steps=mc:test&body=value';

/** A request the target refuses or a step that failed: the status and the `error` text. */
class WorkError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** A WorkError from its plain form (what crosses a thread boundary). */
const workError = ({ status, message }) => new WorkError(status, message);

/** Every distinct message down an error's cause chain, joined by ": " (its code or name if none). */
function causes(e) {
  const parts = [];
  for (let c = e; c; c = c.cause) {
    const text = c.message || (c.errors && c.errors.map((x) => x.message).join(', ')) || c.code;
    if (text && !parts.includes(text)) parts.push(text);
  }
  return parts.length ? parts.join(': ') : String((e && e.name) || e);
}

/** The `iolab serve` flag that would configure a backend (crates/backends `config_flag`). */
const FLAGS = { sleep: 'nothing (sleep is embedded)', http: '--http-backend URL', pg: '--pg URL', mc: '--mc HOST:PORT' };

const notConfigured = (kind) =>
  `backend '${kind}' not configured: start the target with ${FLAGS[kind]} (see \`iolab serve --help\`)`;

const badBody = (body) => `query parameter 'body' is '${body}': expected 'json' (the default) or 'value'`;

/** `{"ok":true,"model":M,"steps":N,"elapsed_ms":X.XXX}`. */
const ok = (model, steps, elapsedMs) =>
  `{"ok":true,"model":"${model}","steps":${steps},"elapsed_ms":${elapsedMs.toFixed(3)}}`;

/** `{"ok":false,"error":"..."}`; JSON.stringify escapes as serde_json does for these texts. */
const error = (message) => `{"ok":false,"error":${JSON.stringify(message)}}`;

const notFound = (path) => `no such path '${path}' (the contract has /work?steps=..., /health, /metrics)`;
const methodNotAllowed = (method) => `method ${method} not allowed (use GET)`;

module.exports = {
  JSON_TYPE,
  OCTET_STREAM,
  PROMETHEUS,
  MISSING_STEPS,
  VALUE_NEEDS_MC,
  WorkError,
  workError,
  causes,
  notConfigured,
  badBody,
  ok,
  error,
  notFound,
  methodNotAllowed,
};
