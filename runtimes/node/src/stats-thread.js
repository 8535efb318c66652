'use strict';
// A worker process's stats thread: it answers the supervisor with this process's counters
// (a SharedArrayBuffer the main thread writes) on a loopback port of its own, so a main
// thread blocked in Atomics.wait (loop-blocking, prefork) cannot starve /metrics.

const http = require('http');
const { parentPort, workerData } = require('worker_threads');
const { Counters } = require('./counters');

const counters = new Counters(workerData.sab);

const server = http.createServer((req, res) => {
  if (req.url === '/counters') {
    const body = JSON.stringify(counters.snapshot());
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  } else if (req.url === '/reset' && req.method === 'POST') {
    counters.reset();
    res.writeHead(204).end();
  } else {
    res.writeHead(404).end();
  }
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
