'use strict';
// Test helpers: start targets through the launcher (./start) as iolab does, talk to them
// over real loopback sockets, and read /metrics.

const http = require('http');
const net = require('net');
const path = require('path');
const { spawn } = require('child_process');

const ROOT = path.join(__dirname, '..');
const START = path.join(ROOT, 'start');

/** Environment without the backends, unless a test asks for them. */
function bareEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  for (const k of ['IOLAB_PG', 'IOLAB_MC', 'IOLAB_HTTP_BACKEND']) if (!(k in extra)) delete env[k];
  return env;
}

/** Start `./start ARGS`; resolves once stdout has the URL line (and the metrics line when asked). */
function startTarget(args, { env = bareEnv(), timeoutMs = 30000, group = false } = {}) {
  return new Promise((resolve, reject) => {
    // `group`: the launcher leads its own process group, as a lab that signals groups starts it.
    const proc = spawn(START, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: group });
    let out = '';
    let err = '';
    const want = args.includes('--metrics-port') ? 2 : 1;
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`no URL within ${timeoutMs} ms; stderr: ${err}`));
    }, timeoutMs);
    proc.stderr.on('data', (d) => (err += d));
    proc.stdout.on('data', (d) => {
      out += d;
      const lines = out.split('\n').filter(Boolean);
      if (lines.length >= want && out.endsWith('\n')) {
        clearTimeout(timer);
        const target = {
          proc,
          lines,
          url: lines[0],
          metricsUrl: want === 2 ? lines[1].replace(/^metrics /, '') : null,
          stderr: () => err,
          /** SIGTERM (to the whole group with `group`); resolves {code, signal, ms}. */
          stop: (signal = 'SIGTERM') => {
            const t0 = Date.now();
            const done = new Promise((r) => proc.once('exit', (code, sig) => r({ code, signal: sig, ms: Date.now() - t0 })));
            if (group) process.kill(-proc.pid, signal);
            else proc.kill(signal);
            return done;
          },
        };
        resolve(target);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`launcher exited ${code} before its URL; stderr: ${err}`));
    });
  });
}

/** Run `./start ARGS` to its end: {code, stdout, stderr}. */
function runLauncher(args, env = bareEnv()) {
  return new Promise((resolve) => {
    const proc = spawn(START, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => (stdout += d));
    proc.stderr.on('data', (d) => (stderr += d));
    proc.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** GET on a new connection: {status, type, body (Buffer), text, ms, headers}. */
function get(base, urlPath = '', { method = 'GET', timeoutMs = 20000 } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(base + urlPath, { method, agent: false, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: res.statusCode,
          type: res.headers['content-type'] || '',
          headers: res.headers,
          body,
          text: body.toString(),
          ms: performance.now() - t0,
        });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${urlPath} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** The samples of a /metrics text: series name (with labels) -> number. */
function parseMetrics(text) {
  const out = {};
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out[line.slice(0, i)] = Number(line.slice(i + 1));
  }
  return out;
}

async function metrics(base) {
  return parseMetrics((await get(base, '/metrics')).text);
}

/** Wall time of `n` concurrent GETs of `urlPath`, with their answers. */
async function concurrent(base, urlPath, n) {
  const t0 = performance.now();
  const answers = await Promise.all(Array.from({ length: n }, () => get(base, urlPath)));
  return { ms: performance.now() - t0, answers };
}

/** Store `value` under `key` in memcached at HOST:PORT (ASCII `set`). */
function mcSet(addr, key, value) {
  const i = addr.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(addr.slice(i + 1)), addr.slice(0, i), () => {
      s.write(Buffer.concat([Buffer.from(`set ${key} 0 0 ${value.length}\r\n`), value, Buffer.from('\r\n')]));
    });
    let got = '';
    s.on('data', (d) => {
      got += d;
      if (got.includes('\r\n')) {
        s.end();
        if (got.startsWith('STORED')) resolve();
        else reject(new Error(`memcached answered ${got.trim()}`));
      }
    });
    s.on('error', reject);
  });
}

/** One memcached `stats` value (e.g. total_connections). */
function mcStat(addr, name) {
  const i = addr.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(addr.slice(i + 1)), addr.slice(0, i), () => s.write('stats\r\n'));
    let got = '';
    s.on('data', (d) => {
      got += d;
      if (got.includes('END\r\n')) {
        s.end();
        const m = got.match(new RegExp(`STAT ${name} (\\d+)`));
        m ? resolve(Number(m[1])) : reject(new Error(`no stat ${name}`));
      }
    });
    s.on('error', reject);
  });
}

/** Is a process alive? */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids of a process's children (from /proc). */
function children(pid) {
  const fs = require('fs');
  try {
    return fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Backends from the environment; a test needing one skips without it, unless IOLAB_REQUIRE_BACKENDS=1. */
function backend(name) {
  const v = process.env[name];
  if (!v && process.env.IOLAB_REQUIRE_BACKENDS === '1') throw new Error(`${name} is not set and IOLAB_REQUIRE_BACKENDS=1`);
  return v || null;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

module.exports = { ROOT, bareEnv, startTarget, runLauncher, get, parseMetrics, metrics, concurrent, mcSet, mcStat, alive, children, backend, sleep };
