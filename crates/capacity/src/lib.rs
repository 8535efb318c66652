//! Your service, measured as a black box: `iolab capacity` and `iolab
//! whatif` ([`whatif`]), on the bench they are given ([`Bench`]: the real
//! one or the simulated one in [`sim`]).
//!
//! `iolab capacity`: the highest sustained open-loop rate a target serves
//! within an objective ([`Slo`]), found by a ramp and a bisection
//! ([`search`]), each step measured like a run ([`step`]), and the queueing
//! model fitted to the curve (`iolab_predict::fit`) with what each
//! concurrency model would do with the fitted service; with `--sweep N`,
//! a closed-loop sweep after it and the Universal Scalability Law fitted
//! beside the queueing fit ([`sweep`]).
//!
//! **How long a step lasts.** Just above capacity, at rate (1 + e) x X
//! (e = the precision), the queue grows by e x X requests a second, so a
//! request sent t seconds into the step waits about e x t. It misses a
//! latency bound L once S + e x t > L, S being the unloaded service time;
//! for the objective's percentile q to fail, more than (1 - q) of the
//! step's requests must miss it, which takes a step of
//! (L - S) / (e x q) seconds. With no latency clause, L is the client
//! timeout. Each step also sends at least [`MIN_REQUESTS`] requests, and
//! lasts between the `min_step` and `max_step` of [`Options`].

pub mod bench;
pub mod gate;
pub mod interval;
pub mod machine;
pub mod mix;
mod neighbours;
pub mod preset;
pub mod scrape;
pub mod search;
pub mod seen;
mod share;
pub mod sim;
mod start;
pub mod step;
pub mod sweep;
mod walk;
pub mod warm;
pub mod watch;
pub mod whatif;
pub mod windows;

use std::time::{Duration, Instant};

use iolab_model::capacity::usl::SweepLevel;
use iolab_model::capacity::{Budget, LoopDelay, Machine, Search as SearchRecord, Slo, StepRecord};
use iolab_predict::fit::fit;
use iolab_predict::whatif::{what_if, Replay};

pub use bench::{Bench, StepError};
use search::{Bounds, End, Search};
pub use step::{judge, Probe};
pub use sweep::SweepOptions;
use walk::walk;

/// What a search shows as it goes: each step, and each level of its sweep.
/// Any `Fn(&StepRecord)` is one that shows no level.
pub trait Progress {
    /// A step was measured.
    fn step(&self, s: &StepRecord);
    /// A level of the sweep was measured.
    fn level(&self, _l: &SweepLevel) {}
}

impl<F: Fn(&StepRecord)> Progress for F {
    fn step(&self, s: &StepRecord) {
        self(s)
    }
}

/// Fewest requests one step sends (a p99 needs a tail to read).
pub const MIN_REQUESTS: f64 = 100.0;

/// Steps a search measures again when a fail had no verdict (the
/// generator's lateness could explain it) before it stops on one.
pub const GENERATOR_RETRIES: usize = 3;

/// The search's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// First rate, req/s.
    pub start_rps: f64,
    /// Highest rate tried, req/s.
    pub max_rps: f64,
    /// Bracket width to stop at (0.05 = 5%).
    pub precision: f64,
    /// Shortest step.
    pub min_step: Duration,
    /// Longest step.
    pub max_step: Duration,
    /// Most rates decided (each held in up to [`Budget::windows`] steps).
    pub max_steps: usize,
    /// Cores the target's host offers (for the fit and the what-ifs).
    pub cores: u32,
    /// The closed-loop sweep after the search (`--sweep N`), if asked.
    pub sweep: Option<SweepOptions>,
    /// The share of a rate's windows allowed to miss the objective
    /// (`--budget`): a rate is held window after window until it is clear
    /// whether it holds ([`Budget`]).
    pub budget: Budget,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            start_rps: 10.0,
            max_rps: 100_000.0,
            precision: 0.05,
            min_step: Duration::from_secs(1),
            max_step: Duration::from_secs(30),
            max_steps: 30,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            sweep: None,
            budget: Budget::default(),
        }
    }
}

/// The step length's terms (see the module's header), one formula for the
/// length and for the rule that explains it.
struct Queue {
    /// L, ms: the objective's tightest latency bound, else the timeout.
    bound_ms: f64,
    /// q: the objective's percentile (1 without one).
    q: f64,
    /// (L - S) / (e x q), seconds.
    queue_s: f64,
}

impl Queue {
    fn of(slo: &Slo, timeout: Duration, unloaded_ms: f64, o: &Options) -> Queue {
        let bound_ms = slo.tightest_ms().unwrap_or(timeout.as_secs_f64() * 1000.0);
        let q = slo.percentile().unwrap_or(1.0);
        let queue_s = (bound_ms - unloaded_ms).max(1.0) / 1000.0 / (o.precision * q);
        Queue {
            bound_ms,
            q,
            queue_s,
        }
    }
}

/// The length of a step at `rate` (see the module's header).
pub fn step_length(
    slo: &Slo,
    timeout: Duration,
    unloaded_ms: f64,
    o: &Options,
    rate: f64,
) -> Duration {
    let Queue { queue_s, .. } = Queue::of(slo, timeout, unloaded_ms, o);
    let requests_s = MIN_REQUESTS / rate.max(0.1);
    Duration::from_secs_f64(queue_s.max(requests_s)).clamp(o.min_step, o.max_step)
}

/// The rule in words, with its numbers for this target.
pub fn step_rule(slo: &Slo, timeout: Duration, unloaded_ms: f64, o: &Options) -> String {
    let Queue {
        bound_ms,
        q,
        queue_s,
    } = Queue::of(slo, timeout, unloaded_ms, o);
    format!(
        "each step lasts (L - S) / (e x q) = ({bound_ms:.0} ms - {unloaded_ms:.1} ms) / ({:.0}% x {q}) = {queue_s:.2} s, so that a rate {:.0}% above capacity queues past L before it ends; at least {MIN_REQUESTS:.0} requests; between {:.1} s and {:.1} s",
        o.precision * 100.0,
        o.precision * 100.0,
        o.min_step.as_secs_f64(),
        o.max_step.as_secs_f64()
    )
}

/// Search one target on `probe` (then sweep it, when asked); `each` sees
/// every step and level as it is measured.
pub fn run(
    name: &str,
    probe: &dyn Bench,
    slo: &Slo,
    o: &Options,
    notes: Vec<String>,
    each: &dyn Progress,
) -> SearchRecord {
    let t0 = Instant::now();
    let watch = probe.watch_machine();
    let unloaded_ms = probe.unloaded_ms().unwrap_or(0.0);
    let mut search = Search::new(Bounds {
        start_rps: o.start_rps,
        max_rps: o.max_rps,
        precision: o.precision,
        max_steps: o.max_steps,
    });
    let walk = walk(&mut search, probe, slo, o, unloaded_ms, each);
    let machine = machine(watch.finish(), &walk.steps, o);
    let capacity = search.answer();
    let failed = search.lowest_fail();
    let fitted = capacity.and_then(|c| fit(&walk.steps, c, o.cores));
    let rates = measured_rates(&walk.steps);
    let what = fitted
        .as_ref()
        .zip(capacity)
        .map(|(f, c)| {
            what_if(
                f,
                &Replay {
                    rates: &rates,
                    step: step_length(slo, probe.timeout(), unloaded_ms, o, c),
                    timeout: probe.timeout(),
                    slo,
                },
            )
        })
        .unwrap_or_default();
    // The search's time (its fit and what-ifs too); the sweep has its own.
    let searched_s = t0.elapsed().as_secs_f64();
    let sweep = o.sweep.filter(|_| !probe.cancelled()).map(|sw| {
        // What the search's last step left queued drains first.
        probe.settle(settle_time(unloaded_ms));
        sweep::run(probe, &sw, fitted.as_ref(), each)
    });
    let mut record = SearchRecord {
        name: name.to_string(),
        target: probe.target(),
        notes,
        step_rule: step_rule(slo, probe.timeout(), unloaded_ms, o),
        outcome: outcome(walk.end, walk.failure, &walk.steps, o),
        interval: interval::interval(capacity, failed, &walk.steps, &search.noise(), o.precision)
            .map(|i| machine.as_ref().map_or(i, |m| m.widen(i))),
        noise: search.noise(),
        machine,
        bracket_width_pct: capacity
            .zip(failed)
            .filter(|(c, f)| f > c)
            .map(|(c, f)| (f - c) / c * 100.0),
        capacity_rps: capacity,
        failed_rps: failed,
        steps: walk.steps,
        fit: fitted,
        what_if: what,
        elapsed_s: searched_s,
        sweep,
        fails_first: None,
        endpoint_split: None,
        mix_cpu: None,
        mix_what_if: Vec::new(),
    };
    seen::review(&mut record);
    record.fails_first = mix::fails_first(&record);
    record.endpoint_split = mix::split(&record);
    record
}

/// What the machine did through the search, held to the precision asked;
/// the target's event-loop delay is read per step (its series resets at
/// each scrape), so it joins what the watch saw after the walk.
fn machine(watched: Option<Machine>, steps: &[StepRecord], o: &Options) -> Option<Machine> {
    match (watched, LoopDelay::of(steps)) {
        (None, None) => None,
        (m, loop_delay) => Some(Machine {
            asked_pct: o.precision * 100.0,
            loop_delay,
            ..m.unwrap_or_default()
        }),
    }
}

/// Long enough for an unloaded service to answer what is still queued.
pub(crate) fn settle_time(unloaded_ms: f64) -> Duration {
    Duration::from_secs_f64((unloaded_ms * 2.0).max(unloaded_ms + 20.0) / 1000.0)
}

/// The distinct rates measured, lowest first (the what-ifs replay them).
fn measured_rates(steps: &[StepRecord]) -> Vec<f64> {
    let mut rates: Vec<f64> = steps.iter().map(|s| s.rate_rps).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    rates
}

/// `POST https://host/path (2 headers, 1024-byte body)`, or the URL.
pub fn describe(p: &Probe) -> String {
    if let Some(mix) = &p.request.mix {
        return format!(
            "a recorded mix of {} endpoints to {}",
            mix.endpoints.len(),
            p.url
        );
    }
    match p.request.list.as_slice() {
        [] => p.url.clone(),
        [one] => {
            let mut s = format!("{} {}", one.method, one.url);
            if !one.headers.is_empty() || !one.body.is_empty() {
                s.push_str(&format!(
                    " ({} headers, {}-byte body)",
                    one.headers.len(),
                    one.body.len()
                ));
            }
            s
        }
        many => format!(
            "{} requests in turn, first {} {}",
            many.len(),
            many[0].method,
            many[0].url
        ),
    }
}

fn outcome(
    end: Option<End>,
    failure: Option<StepError>,
    steps: &[StepRecord],
    o: &Options,
) -> String {
    if let Some(e) = failure {
        return format!("stopped: the load generator refused a step: {e}");
    }
    if steps
        .last()
        .is_some_and(|s| s.generator_saturated && !s.passed)
    {
        return "stopped: the generator itself was the bottleneck at the last rate; the answer is a lower bound".into();
    }
    match end {
        None => "interrupted: the answer covers the steps measured".into(),
        Some(End::Converged) => format!(
            "converged: the bracket is within {:.0}% and its bottom held twice",
            o.precision * 100.0
        ),
        Some(End::Cap) => format!(
            "every rate up to the cap of {:.0} req/s met the objective: raise --max",
            o.max_rps
        ),
        Some(End::NothingPassed) => {
            "no rate met the objective, down to the lowest tried: check the objective and --timeout"
                .into()
        }
        Some(End::Budget) => format!(
            "stopped after {} steps before the bracket narrowed: raise --max-steps or --precision",
            o.max_steps
        ),
        Some(End::Noisy) => {
            "stopped: the answer failed every confirmation; the verdicts are noise (see noise)"
                .into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_lasts_long_enough_for_the_queue_to_show() {
        let slo: Slo = "p99<200ms".parse().unwrap();
        let o = Options {
            precision: 0.1,
            ..Options::default()
        };
        // (200 - 100) ms / (10% x 0.99) = 1.01 s, at least MIN_REQUESTS (100) requests.
        let d = step_length(&slo, Duration::from_secs(1), 100.0, &o, 1000.0);
        assert!((d.as_secs_f64() - 1.0101).abs() < 0.01, "{d:?}");
        assert_eq!(
            step_length(&slo, Duration::from_secs(1), 100.0, &o, 20.0),
            Duration::from_secs(5)
        );
        assert_eq!(
            step_length(&slo, Duration::from_secs(1), 100.0, &o, 1.0),
            o.max_step
        );
        let success: Slo = "success>=99%".parse().unwrap();
        let d = step_length(&success, Duration::from_millis(500), 100.0, &o, 1000.0);
        assert!((d.as_secs_f64() - 4.0).abs() < 0.01, "{d:?}");
        assert!(step_rule(&slo, Duration::from_secs(1), 100.0, &o).contains("= 1.01 s"));
    }
}
