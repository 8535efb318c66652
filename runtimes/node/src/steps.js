'use strict';
// The workload language, ported byte for byte from crates/model/src/steps/parse.rs:
//
//     steps := item (',' item)*            a top-level list runs in sequence
//     item  := seq(steps) | par(steps) | leaf
//     leaf  := cpu:N | sleep:MS | http:MS | pg:MS | mc:KEY
//
// Positions in errors are UTF-8 byte offsets, as in Rust, so the parser walks the
// input's UTF-8 bytes. vectors/steps.json pins every message.

const LIMITS = Object.freeze({
  maxDepth: 16,
  maxLeaves: 1000,
  maxMs: 3600000,
  maxCpuTerms: 100000000000,
  maxKeyLen: 250,
  maxInputLen: 16384,
});

/** The backend kinds in label order (the order of /metrics and of the counters). */
const KINDS = Object.freeze(['sleep', 'http', 'pg', 'mc']);
// Every word that starts a step, as the unknown-step message lists them (from KINDS).
const WORDS = ['cpu', ...KINDS, 'seq', 'par'];
const STEP_WORDS = `${WORDS.slice(0, -1).join(', ')} or ${WORDS[WORDS.length - 1]}`;

/** A fault in a steps string: `steps: DETAIL at POSITION`. */
class StepsError extends Error {
  constructor(detail, position) {
    super(`steps: ${detail} at ${position}`);
    this.detail = detail;
    this.position = position;
  }
}

// Steps are plain objects so they cross thread boundaries (postMessage) as they are:
// {t:'cpu', terms} | {t:'io', kind, micros} | {t:'io', kind:'mc', key} | {t:'seq'|'par', children}

const isAlpha = (c) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isDigit = (c) => c >= 0x30 && c <= 0x39;
const isKey = (c) => isAlpha(c) || isDigit(c) || c === 0x5f || c === 0x2e || c === 0x2d || c === 0x3a;

class Parser {
  constructor(bytes) {
    this.s = bytes;
    this.pos = 0;
    this.leaves = 0;
  }

  err(detail) {
    return new StepsError(detail, this.pos);
  }

  atEnd() {
    return this.pos >= this.s.length;
  }

  /** The byte at the cursor, or -1 at the end. */
  peek() {
    return this.pos < this.s.length ? this.s[this.pos] : -1;
  }

  /** The whole character at the cursor (always on a char boundary here). */
  peekChar() {
    if (this.atEnd()) return '?';
    const text = this.s.subarray(this.pos, this.pos + 4).toString('utf8');
    return String.fromCodePoint(text.codePointAt(0));
  }

  skipWs() {
    while (this.peek() === 0x20 || this.peek() === 0x09) this.pos++;
  }

  take(pred) {
    const start = this.pos;
    while (this.pos < this.s.length && pred(this.s[this.pos])) this.pos++;
    return this.s.toString('latin1', start, this.pos);
  }

  list(depth) {
    const items = [this.item(depth)];
    for (;;) {
      this.skipWs();
      if (this.peek() !== 0x2c) return items;
      this.pos++;
      this.skipWs();
      items.push(this.item(depth));
    }
  }

  item(depth) {
    this.skipWs();
    const start = this.pos;
    const word = this.take(isAlpha);
    switch (word) {
      case 'seq':
      case 'par': {
        if (this.peek() !== 0x28) throw this.err(`expected '(' after '${word}'`);
        if (depth + 1 > LIMITS.maxDepth) throw this.err(`nesting deeper than ${LIMITS.maxDepth} levels`);
        this.pos++;
        this.skipWs();
        if (this.peek() === 0x29) throw this.err(`'${word}(...)' needs at least one step`);
        const children = this.list(depth + 1);
        this.skipWs();
        if (this.peek() !== 0x29) throw this.err("expected ')'");
        this.pos++;
        return { t: word, children };
      }
      case 'cpu':
      case 'sleep':
      case 'http':
      case 'pg':
      case 'mc': {
        if (this.peek() !== 0x3a) throw this.err(`expected ':' after '${word}'`);
        this.pos++;
        this.leaves++;
        if (this.leaves > LIMITS.maxLeaves) {
          this.pos = start;
          throw this.err(`more than ${LIMITS.maxLeaves} steps`);
        }
        if (word === 'cpu') return { t: 'cpu', terms: this.whole() };
        if (word === 'mc') return { t: 'io', kind: 'mc', key: this.key() };
        return { t: 'io', kind: word, micros: this.millis() };
      }
      case '':
        throw this.atEnd() ? this.err('expected a step') : this.err(`expected a step, found '${this.peekChar()}'`);
      default:
        this.pos = start;
        throw this.err(`unknown step '${word}' (expected ${STEP_WORDS})`);
    }
  }

  whole() {
    const start = this.pos;
    const d = this.take(isDigit);
    if (d === '') throw this.err('expected a whole number of terms');
    const n = Number(d);
    if (n > LIMITS.maxCpuTerms) {
      this.pos = start;
      throw this.err(`cpu terms above the limit of ${LIMITS.maxCpuTerms}`);
    }
    return n;
  }

  millis() {
    const start = this.pos;
    const int = this.take(isDigit);
    let text = int;
    if (this.peek() === 0x2e) {
      this.pos++;
      const frac = this.take(isDigit);
      if (frac === '') throw this.err("expected digits after '.'");
      text = `${int}.${frac}`;
    }
    if (int === '') {
      this.pos = start;
      throw this.err('expected milliseconds, e.g. 200 or 0.5');
    }
    const ms = Number(text);
    if (ms > LIMITS.maxMs) {
      this.pos = start;
      throw this.err(`${text} ms is above the limit of ${LIMITS.maxMs} ms`);
    }
    return Math.round(ms * 1000);
  }

  key() {
    const start = this.pos;
    const key = this.take(isKey);
    if (key === '') throw this.err('expected a memcached key');
    if (key.length > LIMITS.maxKeyLen) {
      this.pos = start;
      throw this.err(`memcached key longer than ${LIMITS.maxKeyLen} bytes`);
    }
    return key;
  }
}

/** Parse and validate a steps string; throws StepsError. */
function parse(input) {
  const bytes = Buffer.from(input, 'utf8');
  if (bytes.length > LIMITS.maxInputLen) {
    throw new StepsError(`input longer than ${LIMITS.maxInputLen} bytes`, LIMITS.maxInputLen);
  }
  const p = new Parser(bytes);
  p.skipWs();
  if (p.atEnd()) throw p.err("empty workload: expected a step such as 'sleep:100'");
  const items = p.list(0);
  p.skipWs();
  if (!p.atEnd()) throw p.err(p.peek() === 0x29 ? "unexpected ')'" : `unexpected '${p.peekChar()}'`);
  return items.length === 1 ? items[0] : { t: 'seq', children: items };
}

/** Milliseconds as text: whole numbers bare, fractions with up to 3 decimals. */
function millisText(micros) {
  const ms = Math.floor(micros / 1000);
  const frac = micros % 1000;
  return frac === 0 ? `${ms}` : `${ms}.${String(frac).padStart(3, '0').replace(/0+$/, '')}`;
}

/** The canonical text: parse(canonical(s)) equals s. */
function canonical(step) {
  switch (step.t) {
    case 'cpu':
      return `cpu:${step.terms}`;
    case 'io':
      return step.kind === 'mc' ? `mc:${step.key}` : `${step.kind}:${millisText(step.micros)}`;
    default:
      return `${step.t}(${step.children.map(canonical).join(',')})`;
  }
}

/** Number of leaf steps: the contract's "steps" field. */
function leafCount(step) {
  return step.t === 'seq' || step.t === 'par' ? step.children.reduce((n, c) => n + leafCount(c), 0) : 1;
}

/** Every backend kind the workload calls. */
function kinds(step, out = new Set()) {
  if (step.t === 'io') out.add(step.kind);
  else if (step.children) step.children.forEach((c) => kinds(c, out));
  return out;
}

module.exports = { LIMITS, KINDS, StepsError, parse, canonical, leafCount, kinds, millisText };
