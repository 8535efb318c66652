//! What a simulated service's answers should be, known without a search:
//!
//! - its **capacity** under an objective: the highest rate a long step of
//!   the same noisy service meets it at (a bisection to 0.5% on fresh
//!   benches, each step [`LONG`] times the search's, so one unlucky pause
//!   does not decide it);
//! - the **network a change gives**: the change a what-if names (its model,
//!   its knobs, its cores) made to the service itself, with the service's
//!   own work and pool, so the fit's prediction is held to what the change
//!   would really do.

use std::time::Duration;

use iolab_model::capacity::{SearchStage, Slo};
use iolab_predict::fit::Network;

use super::{Dial, Service, SimBench};
use crate::Bench;

/// How many times longer than the search's a truth's step is.
pub const LONG: u32 = 4;

/// Does a fresh bench of `service` meet `slo` over a long step at `rate`?
fn holds<'a>(
    service: &'a Service,
    dial: &'a Dial,
    slo: &Slo,
    timeout: Duration,
    step: Duration,
) -> impl Fn(f64) -> bool + 'a {
    let slo = slo.clone();
    move |rate: f64| {
        let bench = SimBench::new(service.clone(), dial.clone(), timeout);
        bench
            .step(&slo, rate, step * LONG, SearchStage::Bisect)
            .is_ok_and(|s| s.passed)
    }
}

/// The service's capacity under `slo`, req/s, searched between a tenth of
/// its saturation and a tenth above it; `step` is the search's step at
/// capacity.
pub fn capacity(
    service: &Service,
    dial: &Dial,
    slo: &Slo,
    timeout: Duration,
    step: Duration,
) -> f64 {
    let pass = holds(service, dial, slo, timeout, step);
    let sat = service.saturation_rps();
    let (mut lo, mut hi) = (0.1 * sat, 1.1 * sat);
    if pass(hi) {
        return hi;
    }
    while hi - lo > 0.005 * lo {
        let mid = (lo + hi) / 2.0;
        if pass(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The service as `change` (a network the what-if built from the fit)
/// would leave it: the change's model, knobs and cores, the service's own
/// work; its own pool unless the change sets another (a change built by
/// `Network::on` keeps the fitted pool: that one is the fit's, not the
/// service's).
pub fn changed(change: &Network, fitted: &Network, service: &Network) -> Network {
    let mut params = change.params.clone();
    if params.pg_pool == fitted.params.pg_pool {
        params.pg_pool = service.params.pg_pool;
    }
    Network {
        model: change.model,
        params,
        steps: service.steps.clone(),
        cores: change.cores,
        gil: service.gil,
    }
}
