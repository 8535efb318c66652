//! The search, the fit, the binding rules and the what-ifs on simulated
//! benches whose truth is known: the real runs' regressions replayed
//! ([`regressions`]; the property over generated services is
//! `crates/capacity/tests/sim_bench/main.rs`, its own test binary, so that its
//! seconds of CPU do not run beside the timing-sensitive tests of this
//! one).

mod regressions;

use std::time::Duration;

use iolab_model::capacity::{Search as SearchRecord, Slo};

use super::{network as net, work, Dial, Service, SimBench};

/// Search `service` under `slo` with `dial`'s noise: the search's record
/// and the bench it ran on.
fn search(
    service: &Service,
    dial: &Dial,
    slo: &Slo,
    timeout: Duration,
) -> (SearchRecord, SimBench) {
    let bench = SimBench::new(service.clone(), dial.clone(), timeout);
    (bench.search(slo), bench)
}
