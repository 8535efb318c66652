//! Verified counterfactuals: the `iolab.whatif/1` document `iolab whatif`
//! prints with `--json` and saves as `whatif.json`. For each pair, service
//! A searched as a black box (its fit names the binding resource), what the
//! fitted network predicts for each change B, and B measured: predicted
//! against measured capacity under the same objective.

use serde::{Deserialize, Serialize};

pub use crate::cpu_speed::CpuSpeed;

use crate::capacity::{CpuSource, Interval, Resource, Search, Slo, WhatIf};

/// The schema tag of [`WhatIfFile`].
pub const WHATIF_SCHEMA: &str = "iolab.whatif/1";

/// One change made and measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Counterfactual {
    /// B's name (its label in the preset).
    pub name: String,
    /// The change, as its runtime serves it (model and knobs, the
    /// runtime's defaults filled in).
    pub change: String,
    /// The fitted network with that change, simulated.
    pub predicted: WhatIf,
    /// B's own capacity search.
    pub measured: Search,
    /// (predicted - measured) / measured capacity, %; `None` when either
    /// is missing.
    pub error_pct: Option<f64>,
    /// Where the prediction lies: the predicted capacity stretched by A's
    /// interval relative to A's capacity (B is predicted from A's fit, so
    /// A's doubt is B's); `None` without both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_interval: Option<Interval>,
    /// The predicted and the measured intervals meet: the prediction holds
    /// within what both searches could tell (issue 51); `None` without both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals_meet: Option<bool>,
    /// What a request costs under B's runtime, measured before B was: the
    /// CPU per request `predicted` was simulated with. `None`: not
    /// calibrated (`--uncalibrated`, a foreign A or B, no CPU reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
}

/// The CPU a request costs under B's runtime, from copies of A's and B's
/// runtime and model serving only the fitted wait: A's and B's own
/// processes, sent the wait in place of their steps
/// (`iolab_capacity::whatif::calibrate`): A's copy at A's capacity
/// (A's cost less its copy's is the handler's own work, which B keeps),
/// B's copy at the rate B is predicted to hold (what B's runtime adds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Calibration {
    /// The work both copies served in place of the handler, e.g.
    /// `sleep:47.1` (nine tenths of the fitted wait, S less the fitted
    /// CPU).
    pub wait: String,
    /// Whose CPU A and both copies were read from: the process trees (their
    /// CPU-time clocks, less their JIT's compiler threads') when A's steps
    /// have them, else the source A's fit used. The pinned cores also carry other work (at 100 req/s a Rust
    /// copy's core read 0.25-0.78 ms a request over five holds, its process
    /// 0.098 every time), and their busy time is counted in ticks, which
    /// missed most of a loop's bursts (0.096 of a core at 3,200/s where
    /// the loop's own clock read 0.23).
    pub source: CpuSource,
    /// A's capacity, req/s.
    pub a_rate_rps: f64,
    /// A's CPU per answered request at that rate, ms: the lesser of A's
    /// last two holds after its copy ([`Calibration::a_again`]) when both
    /// met the objective, else of its last two warm holds
    /// ([`Calibration::a_warm`]), else the least of its search's steps there
    /// (other work on the core only ever adds to a reading).
    pub a_ms: f64,
    /// A itself, after its search, warmed as B is and held again at that
    /// rate until two holds cost alike: every hold, in order. A's search
    /// warms it as it measures it (a Spring A read 8.6 ms a request at its
    /// first step and 2.1 at its last), and B is warmed before its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub a_warm: Vec<RateCost>,
    /// A held twice more at that rate after its copy was steady, so that A
    /// and its copy are read as warm as each other: a JIT compiles in
    /// stages, and a Spring A read 3.26, 1.98 and 2.05 ms a request in its
    /// warm holds (steady by the rule) while its copy, after them, fell
    /// from 1.02 to 0.57 over nine holds; A read 1.98 counted the JIT's
    /// work as the handler's, and B was predicted 24% low.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub a_again: Vec<RateCost>,
    /// Requests A had answered before its copy was held (B's copy serves
    /// as many first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a_answered: Option<f64>,
    /// A's runtime and model serving only the wait at that rate, ms (the
    /// lesser of two steady holds).
    pub a_runtime_ms: f64,
    /// Every measured hold of A's copy at that rate, in order (after its
    /// warm-up): how steady it was and how much of the cores' time was
    /// the copy's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub a_runtime: Vec<RateCost>,
    /// The larger spread of two readings at that rate, A's own (its
    /// search's confirmed answer) or its copy's, ms: how far the handler's
    /// work can be trusted.
    pub noise_ms: f64,
    /// B's runtime and model serving the same wait, at each rate tried: the
    /// uncalibrated prediction first, then each calibrated one while the
    /// prediction moved by more than [`SETTLED`].
    pub b_runtime: Vec<RateCost>,
    /// The prediction before calibration (A's CPU per request as read), req/s.
    pub uncalibrated_rps: Option<f64>,
    /// B predicted with its cost higher by the noise, req/s: the low end
    /// of the prediction.
    pub lower_rps: Option<f64>,
}

/// A calibrated prediction is final once it moves less than this share.
pub const SETTLED: f64 = 0.1;

/// A runtime's CPU per request at one rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RateCost {
    /// The rate held, req/s.
    pub rate_rps: f64,
    /// CPU per answered request, ms; `None` when nothing was answered.
    pub ms: Option<f64>,
    /// The pinned cores' busy time per answered request beside it, ms,
    /// when `ms` was read from the process tree: what the cores burnt
    /// beyond it was the kernel's and other work (or ticks it missed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores_ms: Option<f64>,
    /// The copy met the objective at that rate. When it did not, its cost
    /// there is not read (a collapsing server's CPU over its few answers)
    /// and B, which does the copy's work and more, is held to below it.
    pub met: bool,
}

/// The cost of the last two of `holds` (the lesser) and their spread, ms;
/// `None` unless both met the objective (a hold past a server's capacity
/// reads its CPU over its few answers).
pub fn last_two_met(holds: &[RateCost]) -> Option<(f64, f64)> {
    match holds {
        [.., a, b] if a.met && b.met => {
            let (a, b) = (a.ms?, b.ms?);
            Some((a.min(b), (a - b).abs()))
        }
        _ => None,
    }
}

impl Calibration {
    /// A's cost was read from its warm holds (`a_warm` or `a_again`), not
    /// its search.
    pub fn a_read_warm(&self) -> bool {
        self.a_read_again() || last_two_met(&self.a_warm).is_some()
    }

    /// A's cost was read after its copy (`a_again`).
    pub fn a_read_again(&self) -> bool {
        last_two_met(&self.a_again).is_some()
    }

    /// The handler's own work, ms: A's cost less its runtime's, at least 0.
    pub fn handler_ms(&self) -> f64 {
        (self.a_ms - self.a_runtime_ms).max(0.0)
    }

    /// The handler's work is no larger than the noise of reading it.
    pub fn within_noise(&self) -> bool {
        self.handler_ms() <= self.noise_ms
    }

    /// What B's runtime adds, ms: its copy's cost at the last rate it met
    /// the objective at.
    pub fn b_runtime_ms(&self) -> Option<f64> {
        self.b_runtime
            .iter()
            .rev()
            .filter(|r| r.met)
            .find_map(|r| r.ms)
    }

    /// The CPU per request B is simulated with, ms: the handler's work
    /// plus B's runtime's.
    pub fn b_ms(&self) -> Option<f64> {
        Some(self.handler_ms() + self.b_runtime_ms()?)
    }

    /// The lowest rate B's runtime serving only the wait failed the
    /// objective at.
    pub fn ceiling_rps(&self) -> Option<f64> {
        ceiling(&self.b_runtime)
    }

    /// The highest rate B's copy met below the lowest it failed (half that
    /// rate when it met none); `None` when it failed none.
    pub fn held_rps(&self) -> Option<f64> {
        let c = self.ceiling_rps()?;
        Some(held_below(&self.b_runtime, c))
    }

    /// What B's copy holds: the middle of the bracket of the rates it met
    /// and failed (where it would have been measured next); `None` when it
    /// failed none. B's prediction is at most this. (The highest rate met
    /// was 15% under a rust loop's measured capacity with a bracket 14%
    /// wide: a search narrows to its precision, the calibration to 10%.)
    pub fn copy_capacity_rps(&self) -> Option<f64> {
        let c = self.ceiling_rps()?;
        Some(next_rate(&self.b_runtime, c))
    }
}

/// A service, fitted, and the changes made to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Pair {
    /// The preset's name.
    pub name: String,
    /// The preset's description.
    pub description: String,
    /// The objective of every search of the pair.
    pub slo: Slo,
    /// A, searched as a black box; its fit names the binding resource.
    pub fitted: Search,
    /// The resource A's configuration sets, when the preset says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Resource>,
    /// The fit named `expected`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub named_right: Option<bool>,
    /// Each change B: predicted, then measured.
    pub changes: Vec<Counterfactual>,
    /// How steady the machine's CPU was through the pair; absent when it
    /// could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_speed: Option<CpuSpeed>,
}

/// The `iolab.whatif/1` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WhatIfFile {
    /// Always [`WHATIF_SCHEMA`].
    pub schema: String,
    /// The time-scale every pair ran at (1: as written).
    pub scale: f64,
    /// One entry per preset.
    pub pairs: Vec<Pair>,
    /// Start, RFC 3339 UTC.
    pub started_utc: String,
}

impl Counterfactual {
    /// `predicted` stretched as A's `interval` stretches A's `capacity`.
    pub fn interval(
        predicted: Option<f64>,
        a_capacity: Option<f64>,
        a_interval: Option<Interval>,
    ) -> Option<Interval> {
        let (p, c, i) = (predicted?, a_capacity?, a_interval?);
        (c > 0.0).then(|| Interval {
            low_rps: p * i.low_rps / c,
            high_rps: p * i.high_rps / c,
        })
    }

    /// The two intervals share a rate.
    pub fn meet(predicted: Option<Interval>, measured: Option<Interval>) -> Option<bool> {
        let (p, m) = (predicted?, measured?);
        Some(p.low_rps <= m.high_rps && m.low_rps <= p.high_rps)
    }

    /// (predicted - measured) / measured, %.
    pub fn error(predicted: Option<f64>, measured: Option<f64>) -> Option<f64> {
        let (p, m) = (predicted?, measured?);
        (m > 0.0).then(|| (p - m) / m * 100.0)
    }
}

#[cfg(test)]
mod interval_tests {
    use super::*;

    #[test]
    fn a_prediction_takes_as_wide_an_interval_as_a_had_and_meets_or_not() {
        let a = Some(Interval {
            low_rps: 180.0,
            high_rps: 240.0,
        });
        let p = Counterfactual::interval(Some(400.0), Some(200.0), a).unwrap();
        assert_eq!((p.low_rps, p.high_rps), (360.0, 480.0));
        let m = |low_rps, high_rps| Some(Interval { low_rps, high_rps });
        assert_eq!(Counterfactual::meet(Some(p), m(470.0, 520.0)), Some(true));
        assert_eq!(Counterfactual::meet(Some(p), m(300.0, 350.0)), Some(false));
        assert_eq!(Counterfactual::meet(Some(p), None), None);
        assert_eq!(
            Counterfactual::interval(Some(400.0), Some(200.0), None),
            None
        );
    }
}

/// The lowest rate among `tried` the copy failed the objective at.
pub fn ceiling(tried: &[RateCost]) -> Option<f64> {
    tried
        .iter()
        .filter(|r| !r.met)
        .map(|r| r.rate_rps)
        .reduce(f64::min)
}

/// The rate to measure B's copy at next, given the prediction `next` from
/// its latest cost: `next`, or, at or above a rate the copy failed at, the
/// midpoint between it and the highest rate the copy met below it; half
/// the failed rate while it has met none (an uncalibrated prediction can
/// be far off: a rust loop's was 99,535/s against 15,000/s).
pub fn next_rate(tried: &[RateCost], next: f64) -> f64 {
    let Some(c) = ceiling(tried) else {
        return next;
    };
    if next < c {
        return next;
    }
    match met_below(tried, c) {
        Some(held) => (held + c) / 2.0,
        None => c / 2.0,
    }
}

/// The highest rate among `tried` the copy met below `c`.
fn met_below(tried: &[RateCost], c: f64) -> Option<f64> {
    tried
        .iter()
        .filter(|r| r.met && r.rate_rps < c)
        .map(|r| r.rate_rps)
        .reduce(f64::max)
}

/// The highest rate among `tried` the copy met below `c`, at least `c / 2`.
fn held_below(tried: &[RateCost], c: f64) -> f64 {
    met_below(tried, c).unwrap_or(c / 2.0).max(c / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(rate_rps: f64, ms: f64, met: bool) -> RateCost {
        RateCost {
            rate_rps,
            ms: Some(ms),
            cores_ms: None,
            met,
        }
    }

    #[test]
    fn a_copy_that_fails_caps_the_prediction_and_is_bisected_below() {
        // Virtual threads' copy met 2,274/s and failed 2,657/s, reading
        // 2.7 ms a request over its few answers there.
        let tried = [
            cost(1220.0, 0.143, true),
            cost(2274.0, 0.400, true),
            cost(2657.0, 2.705, false),
        ];
        assert_eq!(ceiling(&tried), Some(2657.0));
        // A prediction above the failure: between it and 2,274.
        assert_eq!(next_rate(&tried, 3000.0), (2274.0 + 2657.0) / 2.0);
        // Below it: taken as it is.
        assert_eq!(next_rate(&tried, 2400.0), 2400.0);
        assert_eq!(next_rate(&tried[..2], 9000.0), 9000.0);
        let k = Calibration {
            wait: "sleep:401".into(),
            source: CpuSource::Cores,
            a_rate_rps: 525.0,
            a_ms: 0.197,
            a_warm: Vec::new(),
            a_again: Vec::new(),
            a_answered: None,
            a_runtime_ms: 0.191,
            a_runtime: Vec::new(),
            noise_ms: 0.019,
            b_runtime: tried.to_vec(),
            uncalibrated_rps: None,
            lower_rps: None,
        };
        // It met 2,274/s and failed 2,657/s: it holds about the middle.
        assert_eq!(k.held_rps(), Some(2274.0));
        assert_eq!(k.copy_capacity_rps(), Some((2274.0 + 2657.0) / 2.0));
        // The failed round's 2.7 ms is not B's runtime's; the last met one is.
        assert_eq!(k.b_runtime_ms(), Some(0.4));
        assert!((k.b_ms().unwrap() - (0.197 - 0.191 + 0.4)).abs() < 1e-12);
        // Failing with nothing met: half of it, until a rate is met.
        assert_eq!(next_rate(&[cost(1000.0, 1.0, false)], 5000.0), 500.0);
        let down = [cost(1000.0, 1.0, false), cost(500.0, 1.0, false)];
        assert_eq!(next_rate(&down, 1000.0), 250.0);
    }
}
