//! `iolab capacity --sweep N`: after the search, a closed-loop sweep of the
//! same target at the client counts `sweep_levels(N)` (1 first, at least
//! six), each held `--sweep-step`; the Universal Scalability Law fitted to
//! the throughputs (`iolab_predict::usl`); then one more level at 2N, where
//! the USL's prediction and the queueing fit's (its network simulated with
//! the same clients, `iolab_predict::whatif::closed_loop_rps`) are judged
//! against what was measured.
//!
//! The sweep runs after the search, not instead of it: the check at 2N
//! needs the queueing fit, which the search's curve gives. Each level
//! counts X(n) as 2xx answered within the timeout per second, the closed
//! loop's goodput.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use iolab_loadgen::Hooks;
use iolab_model::capacity::usl::{sweep_levels, Sweep, SweepLevel, TwiceCheck, UslFit};
use iolab_model::capacity::Fit;
use iolab_model::driver::Driver;
use iolab_predict::whatif::closed_loop_rps;

use super::{Bench, Probe, Progress, StepError};

/// `--sweep N --sweep-step D`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepOptions {
    /// The largest concurrency swept (the check is at twice it).
    pub max: u32,
    /// How long each level lasts.
    pub step: Duration,
}

/// Said in [`Sweep::stopped`] when Ctrl-C ended the sweep.
pub const INTERRUPTED: &str = "interrupted";
/// Said in [`Sweep::stopped`] when nothing was answered at 2N.
pub const NOTHING_AT_TWICE: &str = "no request was answered in time at twice N: no check";

impl Probe {
    /// `clients` closed-loop clients for `d`, each sending its next request
    /// when the last is answered. `Ok(None)` when Ctrl-C cut it short.
    pub(super) fn closed_loop(
        &self,
        clients: u32,
        d: Duration,
    ) -> Result<Option<SweepLevel>, StepError> {
        let driver = Driver::Closed {
            concurrency: clients,
            requests: None,
            duration: Some(d),
        };
        let plan = self.plan(driver, (d / 10).max(Duration::from_millis(50)));
        let hooks = Hooks {
            cancel: Some(self.cancel.clone()),
            live: self.live.clone(),
            ..Hooks::default()
        };
        let a = iolab_loadgen::attack(&plan, &hooks)
            .map_err(|e| StepError::Refused(e.to_string()))?
            .result;
        if a.interrupted || self.cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
        Ok(Some(SweepLevel {
            concurrency: clients,
            duration_s: d.as_secs_f64(),
            throughput_rps: a.throughput_rps.goodput,
            success_ratio: a.success_ratio(),
            mean_ms: a.latency_ms.mean,
            p50_ms: a.latency_ms.p50,
            p99_ms: a.latency_ms.p99,
            usl_rps: None,
            queueing_rps: None,
        }))
    }
}

/// Sweep the target, fit the law, check both fits at 2N; `fit` is the
/// search's queueing fit, when it has one.
pub fn run(probe: &dyn Bench, o: &SweepOptions, fit: Option<&Fit>, watch: &dyn Progress) -> Sweep {
    let t0 = Instant::now();
    let queueing = |n: u32| fit.and_then(|f| closed_loop_rps(f, n, probe.timeout()));
    let mut levels: Vec<SweepLevel> = Vec::new();
    let mut stopped = None;
    for n in sweep_levels(o.max) {
        match probe.closed(n, o.step) {
            Ok(Some(mut l)) => {
                l.queueing_rps = queueing(n);
                watch.level(&l);
                levels.push(l);
            }
            Ok(None) => stopped = Some(INTERRUPTED.to_string()),
            Err(e) => stopped = Some(e.to_string()),
        }
        if stopped.is_some() {
            break;
        }
    }
    let points: Vec<(f64, f64)> = levels
        .iter()
        .map(|l| (f64::from(l.concurrency), l.throughput_rps))
        .collect();
    let usl = iolab_predict::usl::fit(&points);
    if let Some(u) = &usl {
        for l in &mut levels {
            l.usl_rps = Some(u.throughput(f64::from(l.concurrency)));
        }
    }
    let mut twice = None;
    if let (Some(u), None) = (&usl, &stopped) {
        match check(probe, o, u, &queueing, watch) {
            Ok(c) => twice = Some(c),
            Err(why) => stopped = Some(why),
        }
    }
    Sweep {
        max_concurrency: o.max,
        step_s: o.step.as_secs_f64(),
        levels,
        fit: usl,
        twice,
        stopped,
        elapsed_s: t0.elapsed().as_secs_f64(),
    }
}

/// Measure 2N and judge both predictions there.
// A String for now: a `Bench`'s own errors are its one-line text (the real
// bench's and the simulated one's alike, `bench.rs`); typed with that trait.
fn check(
    probe: &dyn Bench,
    o: &SweepOptions,
    u: &UslFit,
    queueing: &dyn Fn(u32) -> Option<f64>,
    watch: &dyn Progress,
) -> Result<TwiceCheck, String> {
    let n = o.max.saturating_mul(2);
    let mut m = probe
        .closed(n, o.step)?
        .ok_or_else(|| INTERRUPTED.to_string())?;
    if m.throughput_rps <= 0.0 {
        return Err(NOTHING_AT_TWICE.to_string());
    }
    let usl = u.throughput(f64::from(n));
    m.usl_rps = Some(usl);
    m.queueing_rps = queueing(n);
    watch.level(&m);
    let q = m.queueing_rps;
    Ok(TwiceCheck::of(m, usl, q))
}
