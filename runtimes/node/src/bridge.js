'use strict';
// A synchronous call into the io thread: how a thread that must wait synchronously
// (loop-blocking's and prefork's main thread, a loop-offload worker) makes an http, pg or
// mc call. The caller posts the leaf on its MessagePort and blocks in Atomics.wait; the io
// thread runs the non-blocking client, posts the answer, then sets and notifies the word;
// the caller wakes and takes the answer with receiveMessageOnPort. The caller's thread is
// held for the whole call, as a blocking client would hold it.

const { MessageChannel, receiveMessageOnPort } = require('worker_threads');
const { workError } = require('./answers');

/** A new channel to the io thread: `caller` goes to the waiting thread, `server` to the io thread. */
function channel() {
  const { port1, port2 } = new MessageChannel();
  const signal = new Int32Array(new SharedArrayBuffer(4));
  return { caller: { port: port1, signal }, server: { port: port2, signal } };
}

/** The calling side: `call(leaf)` returns the fetched Buffer (mc) or null, or throws a WorkError. */
function caller({ port, signal }) {
  port.unref();
  return function call(leaf) {
    Atomics.store(signal, 0, 0);
    port.postMessage(leaf);
    Atomics.wait(signal, 0, 0);
    const answer = receiveMessageOnPort(port).message;
    if (answer.error) throw workError(answer.error);
    return answer.value === null ? null : Buffer.from(answer.value);
  };
}

/** The io thread's side of one channel: serve every leaf with `backends` (async). */
function serve({ port, signal }, backends) {
  port.on('message', async (leaf) => {
    let answer;
    let transfer = [];
    try {
      const value = await backends.call(leaf);
      if (value === null) {
        answer = { value: null };
      } else {
        // A copy the caller owns: memjs' value is a view of its own receive buffer.
        const ab = new ArrayBuffer(value.length);
        new Uint8Array(ab).set(value);
        answer = { value: ab };
        transfer = [ab];
      }
    } catch (e) {
      answer = { error: { status: e.status || 500, message: e.status ? e.message : `io thread: ${e.message}` } };
    }
    port.postMessage(answer, transfer);
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
  });
}

module.exports = { channel, caller, serve };
