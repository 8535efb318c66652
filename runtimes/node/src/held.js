'use strict';
// The contract's held connections (runtimes/README.md, "Held connections"; the Rust
// reference is crates/servers/src/held_async.rs):
// - GET /ws[?steps=...]: a WebSocket (framing by `ws`); each text message runs the URL's steps
//   on the model's runner, as /work would, then is echoed unchanged. One connection's messages
//   run one after the other, in order. Steps that fail close it with 1011; a client silent for
//   IDLE_MS is closed with 1001.
// - GET /events[?every=100ms]: text/event-stream, the first event at once, then one every
//   interval: `id: N` and `data: {"seq":N,"sent_unix_us":T}` (the wall clock when written).
// A held connection costs the model what it costs it: a socket and callbacks on the event loop;
// the blocking models block it for each message's steps, as they do for a request.

const { WebSocketServer } = require('ws');
const { planWork, param } = require('./route');

/** A WebSocket client silent this long is closed (1001), as the Rust models do. */
const IDLE_MS = 60_000;
/** Largest message taken from a client. */
const MAX_FRAME = 1 << 20;
/** Default and least /events interval, ms. */
const EVERY_MS = 1000;
const MIN_EVERY_MS = 1;
/** An /events client that reads nothing is dropped once this much waits for it. */
const MAX_UNSENT = 1 << 20;

const UNITS = { us: 1e-3, 'µs': 1e-3, ms: 1, s: 1e3, m: 60e3, min: 60e3, h: 3600e3 };

/** iolab's durations (`100ms`, `1s`, `1m30s`) in ms, or undefined when not one. */
function durationMs(text) {
  const re = /(\d+(?:\.\d*)?|\.\d+)(us|µs|ms|min|m|s|h)/y;
  let ms = 0;
  let at = 0;
  while (at < text.length) {
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) return undefined;
    ms += Number(m[1]) * UNITS[m[2]];
    at = re.lastIndex;
  }
  return at > 0 && Number.isFinite(ms) && ms <= 7 * 86400e3 ? ms : undefined;
}

/** The wall clock in whole µs since the Unix epoch. */
function unixMicros() {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

/** GET /events on `res`: an event every `every` until the client goes. */
function events(query, res) {
  let every = EVERY_MS;
  try {
    every = Math.max(MIN_EVERY_MS, durationMs(param(query, 'every') ?? '') ?? EVERY_MS);
  } catch {
    // A bad escape in the query: the default interval, as the Rust models read it.
  }
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  let seq = 0;
  let due = performance.now();
  let timer;
  const push = () => {
    seq += 1;
    res.write(`id: ${seq}\ndata: {"seq":${seq},"sent_unix_us":${unixMicros()}}\n\n`);
    if (res.writableLength > MAX_UNSENT) return res.destroy();
    due += every;
    timer = setTimeout(push, Math.max(0, due - performance.now()));
  };
  res.on('close', () => clearTimeout(timer));
  push();
}

/**
 * Serve GET /ws upgrades on `server`: `runner.run(step)` runs a message's steps as a request's;
 * `configured` and `counters` as the request handler has them.
 */
function attachWebSocket(server, { runner, configured, counters }) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME, perMessageDeflate: false });
  server.on('upgrade', (req, socket, head) => {
    const q = req.url.indexOf('?');
    const path = q < 0 ? req.url : req.url.slice(0, q);
    if (req.method !== 'GET' || path !== '/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    const query = q < 0 || q === req.url.length - 1 ? undefined : req.url.slice(q + 1);
    wss.handleUpgrade(req, socket, head, (ws) => hold(ws, query, { runner, configured, counters }));
  });
  // One sweep for every socket's idleness, not a timer per connection.
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const ws of wss.clients) if (now - ws.heard > IDLE_MS) ws.close(1001, 'idle');
  }, 5_000);
  sweep.unref();
  return wss;
}

/** One WebSocket: each message's steps, then its echo, in arrival order. */
function hold(ws, query, { runner, configured, counters }) {
  ws.heard = performance.now();
  let chain = Promise.resolve();
  ws.on('pong', () => (ws.heard = performance.now()));
  ws.on('ping', () => (ws.heard = performance.now()));
  ws.on('message', (data, isBinary) => {
    ws.heard = performance.now();
    chain = chain.then(async () => {
      if (ws.readyState !== ws.OPEN) return;
      if (query !== undefined) {
        counters.start();
        try {
          const { step } = planWork(query, configured, (kind) => counters.call(kind));
          await runner.run(step);
        } catch {
          counters.finish();
          return ws.close(1011, "the message's steps failed");
        }
        counters.finish();
      }
      if (ws.readyState === ws.OPEN) ws.send(data, { binary: isBinary });
    });
  });
}

module.exports = { attachWebSocket, events, durationMs, IDLE_MS };
