'use strict';
// The cpu step's work: N terms of the Leibniz series for pi, as crates/model/src/cpu.rs.

let sink = 0;

/** sum_{i=0}^{terms-1} 4 * (-1)^i / (2i + 1), term by term (cost linear in terms). */
function leibniz(terms) {
  let acc = 0;
  let sign = 4;
  for (let i = 0; i < terms; i++) {
    acc += sign / (2 * i + 1);
    sign = -sign;
  }
  sink = acc; // keeps the loop from being dropped as dead code
  return sink;
}

module.exports = { leibniz };
