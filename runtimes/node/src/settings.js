'use strict';
// The launcher's flags (runtimes/README.md), validated into one plain settings object
// before anything starts. Every fault is one UsageError line naming the fix (exit 2).

const { MODELS, ALL_KNOBS, defaultKnob, NAMES } = require('./models');

class UsageError extends Error {}

const MAX_WARMUP = 100000;

const USAGE = `usage: start --model MODEL [--port P] [KNOBS] [BACKENDS] [--warmup N] [--metrics-port P]

  --model M            ${NAMES.join(', ')}
  --port P             port on 127.0.0.1 (default 0: a free one; stdout line 1 is the URL)
  --processes N        loop-async (default 1), prefork (default: cores): cluster workers
  --offload N          loop-offload: worker_threads in the offload pool (default 4)
  --mc-pool N          memcached connections per process (default 1, the E4 set-up)
  --pg-pool N          PostgreSQL connections per process (default 10)
  --http-backend URL   iolab's delay service for http:MS steps (else IOLAB_HTTP_BACKEND)
  --pg URL             PostgreSQL for pg:MS steps, postgres://USER@HOST:PORT/DB (else IOLAB_PG)
  --mc HOST:PORT       memcached for mc:KEY steps (else IOLAB_MC)
  --pg-wait MS         longest wait for a pooled PostgreSQL connection (default 30000)
  --warmup N           send itself N requests before printing the URL, then zero the counters
  --metrics-port P     also serve /metrics there, from the supervisor process (line 2 of stdout)
`;

/** `--name value` and `--name=value` pairs; `--help` alone. */
function pairs(argv) {
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') {
      out.push(['help', '']);
      continue;
    }
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument '${arg}' (flags are --name VALUE; see --help)`);
    const eq = arg.indexOf('=');
    if (eq > 0) {
      out.push([arg.slice(2, eq), arg.slice(eq + 1)]);
    } else {
      if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value (see --help)`);
      out.push([arg.slice(2), argv[++i]]);
    }
  }
  return out;
}

function count(flag, text, min, max = Number.MAX_SAFE_INTEGER) {
  if (!/^[0-9]+$/.test(text) || Number(text) < min || Number(text) > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in ${min}..${max}`;
    throw new UsageError(`--${flag} must be a whole number ${range}, got '${text}'`);
  }
  return Number(text);
}

function checkHttp(url, from) {
  const fix = 'use http://HOST:PORT, e.g. the URL `iolab backend http` prints';
  if (!url.startsWith('http://')) throw new UsageError(`--http-backend '${url}'${from} is not an http:// URL: ${fix}`);
  let u;
  try {
    u = new URL(url);
  } catch {
    u = null;
  }
  if (!u || !u.hostname) throw new UsageError(`--http-backend '${url}'${from} is not a valid URL: ${fix}`);
  return url.replace(/\/+$/, '');
}

function checkPg(url, from) {
  const fix = 'use postgres://USER@HOST:PORT/DB';
  if (!url.startsWith('postgres://') && !url.startsWith('postgresql://')) {
    throw new UsageError(`--pg '${url}'${from} is not a PostgreSQL URL: ${fix}`);
  }
  let u;
  try {
    u = new URL(url);
  } catch {
    u = null;
  }
  if (!u || !u.hostname) throw new UsageError(`--pg '${url}'${from} is not a valid PostgreSQL URL: ${fix}`);
  return url;
}

function checkMc(addr, from) {
  const i = addr.lastIndexOf(':');
  const port = i > 0 && /^[0-9]+$/.test(addr.slice(i + 1)) ? Number(addr.slice(i + 1)) : 0;
  if (i <= 0 || port < 1 || port > 65535) {
    throw new UsageError(`--mc '${addr}'${from} is not HOST:PORT: use e.g. 127.0.0.1:11211`);
  }
  return { host: addr.slice(0, i).replace(/^\[(.*)\]$/, '$1'), port, addr };
}

/** Settings from the launcher's argv and environment; throws UsageError. */
function parseSettings(argv, env = process.env) {
  const given = new Map();
  for (const [name, value] of pairs(argv)) {
    if (name === 'help') return { help: USAGE };
    if (given.has(name)) throw new UsageError(`--${name} given twice`);
    given.set(name, value);
  }
  const knobFlags = new Map(ALL_KNOBS.map((k) => [k.replace(/_/g, '-'), k]));
  const other = ['model', 'port', 'http-backend', 'pg', 'mc', 'pg-wait', 'warmup', 'metrics-port'];
  for (const name of given.keys()) {
    if (!knobFlags.has(name) && !other.includes(name)) {
      throw new UsageError(`unknown flag --${name} (see --help)`);
    }
  }
  const model = given.get('model');
  if (model === undefined) throw new UsageError(`missing --model (expected one of: ${NAMES.join(', ')})`);
  if (!MODELS[model]) {
    throw new UsageError(`unknown model '${model}' for the node runtime (expected one of: ${NAMES.join(', ')})`);
  }
  const spec = MODELS[model];
  const knobs = {};
  for (const [flag, knob] of knobFlags) {
    if (!spec.knobs.includes(knob)) {
      if (given.has(flag)) {
        const takes = spec.knobs.map((k) => `--${k.replace(/_/g, '-')}`).join(', ');
        throw new UsageError(`--${flag} does not apply to model '${model}' (node's ${model} takes: ${takes})`);
      }
      continue;
    }
    knobs[knob] = given.has(flag) ? count(flag, given.get(flag), 1, 4096) : defaultKnob(model, knob);
  }
  const backend = (flag, envName, check) => {
    if (given.has(flag)) return check(given.get(flag), '');
    if (env[envName]) return check(env[envName], ` (from ${envName})`);
    return null;
  };
  return {
    model,
    port: given.has('port') ? count('port', given.get('port'), 0, 65535) : 0,
    knobs,
    http: backend('http-backend', 'IOLAB_HTTP_BACKEND', checkHttp),
    pg: backend('pg', 'IOLAB_PG', checkPg),
    mc: backend('mc', 'IOLAB_MC', checkMc),
    pgWaitMs: given.has('pg-wait') ? count('pg-wait', given.get('pg-wait'), 1) : 30000,
    warmup: given.has('warmup') ? count('warmup', given.get('warmup'), 0, MAX_WARMUP) : 0,
    metricsPort: given.has('metrics-port') ? count('metrics-port', given.get('metrics-port'), 0, 65535) : null,
  };
}

module.exports = { parseSettings, UsageError, USAGE };
