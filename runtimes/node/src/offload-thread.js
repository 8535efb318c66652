'use strict';
// One loop-offload thread: it runs one IO leaf at a time, blocked for its whole duration
// (Atomics.wait for a sleep, or for the io thread's answer to an http, pg or mc call).

const { parentPort, workerData } = require('worker_threads');
const { sleepBlocking } = require('./sleep');
const bridge = require('./bridge');

const call = workerData.io ? bridge.caller(workerData.io) : null;

parentPort.on('message', ({ id, leaf }) => {
  try {
    let value = null;
    if (leaf.kind === 'sleep') sleepBlocking(leaf.micros);
    else value = call(leaf);
    // The Buffer from the bridge owns its whole ArrayBuffer: hand it on without a copy.
    if (value === null) parentPort.postMessage({ id, value: null });
    else parentPort.postMessage({ id, value: value.buffer }, [value.buffer]);
  } catch (e) {
    parentPort.postMessage({ id, error: { status: e.status || 500, message: e.message } });
  }
});
