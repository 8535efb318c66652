'use strict';
// The io thread: one per process of a model that waits synchronously. It owns the
// non-blocking clients (so `pg_pool` and `mc_pool` are the process's whole pools, shared by
// every waiting thread) and serves the channels handed to it (bridge.js).

const { parentPort, workerData } = require('worker_threads');
const { Backends } = require('./backends');
const bridge = require('./bridge');

const backends = new Backends(workerData.settings);
parentPort.on('message', (m) => bridge.serve(m, backends));
parentPort.postMessage('ready');
