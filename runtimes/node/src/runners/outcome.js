'use strict';
// How par(...) folds its children's outcomes, in every model (crates/servers/src/exec.rs
// `first_error`): every child runs to its end; the first error in written order wins;
// otherwise the value of the last mc get in written order (null when none).

/** Fold `[{ok, value} | {ok:false, error}]`; returns the value or throws the error. */
function firstError(outcomes) {
  let last = null;
  for (const o of outcomes) {
    if (!o.ok) throw o.error;
    if (o.value !== null && o.value !== undefined) last = o.value;
  }
  return last;
}

module.exports = { firstError };
