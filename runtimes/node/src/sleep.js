'use strict';
// The two ways to wait for `sleep:MS`: a timer (the loop stays free) or Atomics.wait on a
// private SharedArrayBuffer word nobody notifies (the calling thread is blocked, exactly
// as Thread.sleep: Node allows Atomics.wait on the main thread).

const word = new Int32Array(new SharedArrayBuffer(4));

/** Block this thread for `micros` (fractions of a millisecond included). */
function sleepBlocking(micros) {
  Atomics.wait(word, 0, 0, micros / 1000);
}

/** A Promise that settles after `micros`, holding no thread (Node timers: 1 ms resolution). */
function sleepAsync(micros) {
  return new Promise((resolve) => setTimeout(resolve, micros / 1000, null));
}

module.exports = { sleepBlocking, sleepAsync };
