'use strict';
// Which path means what, and the checks every /work request passes before any of its
// work runs (crates/servers/src/routes.rs, plus the JVM target's up-front backend check).

const steps = require('./steps');
const A = require('./answers');

/** Decode `%XX` escapes and `+`; the errors are the Rust targets' texts. */
function percentDecode(raw) {
  const out = [];
  for (let i = 0; i < raw.length; ) {
    const c = raw.charCodeAt(i);
    if (c === 0x25) {
      const hex = raw.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) {
        throw new A.WorkError(400, `bad percent-encoding in query at ${i}: expected %XX with two hex digits`);
      }
      out.push(parseInt(hex, 16));
      i += 3;
    } else if (c === 0x2b) {
      out.push(0x20);
      i += 1;
    } else {
      // Node hands the request target as latin1 text: one char per byte.
      out.push(c & 0xff);
      i += 1;
    }
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(out));
  } catch {
    throw new A.WorkError(400, 'query is not UTF-8 after percent-decoding');
  }
}

/** The first value of query parameter `name`, decoded, or undefined. */
function param(query, name) {
  if (query === undefined) return undefined;
  const prefix = `${name}=`;
  const pair = query.split('&').find((p) => p.startsWith(prefix));
  return pair === undefined ? undefined : percentDecode(pair.slice(prefix.length));
}

/**
 * The /work request in `query`, checked: `{step, value}` (value: answer the last mc value),
 * else a WorkError(400). `configured(kind)` says which backends this target can reach;
 * `calls(kind)` books a call to an unconfigured one, as the other targets count it.
 */
function planWork(query, configured, calls) {
  const text = param(query, 'steps');
  if (text === undefined) throw new A.WorkError(400, A.MISSING_STEPS);
  let step;
  try {
    step = steps.parse(text);
  } catch (e) {
    if (e instanceof steps.StepsError) throw new A.WorkError(400, e.message);
    throw e;
  }
  const body = param(query, 'body');
  if (body !== undefined && body !== 'json' && body !== 'value') throw new A.WorkError(400, A.badBody(body));
  const kinds = steps.kinds(step);
  if (body === 'value' && !kinds.has('mc')) throw new A.WorkError(400, A.VALUE_NEEDS_MC);
  for (const kind of steps.KINDS) {
    if (kinds.has(kind) && !configured(kind)) {
      calls(kind);
      throw new A.WorkError(400, A.notConfigured(kind));
    }
  }
  return { step, value: body === 'value' };
}

/** Route a request line: {kind: 'health'|'metrics'|'work'|'notFound'|'method', ...}. */
function route(method, target) {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const query = q < 0 ? undefined : target.slice(q + 1);
  if (method !== 'GET' && method !== 'HEAD') return { kind: 'method', method };
  switch (path) {
    case '/health':
      return { kind: 'health' };
    case '/metrics':
      return { kind: 'metrics' };
    case '/work':
      return { kind: 'work', query };
    case '/ws':
      return { kind: 'ws' };
    case '/events':
      return { kind: 'events', query };
    default:
      return { kind: 'notFound', path };
  }
}

module.exports = { route, planWork, percentDecode, param };
