//! The search itself, as a pure state machine (no sockets, no clock), so its
//! rules are tested against a scripted service:
//!
//! 1. **Ramp**: from the start rate, double while steps pass (halve while
//!    they fail, when the start already fails) until a pass and a fail
//!    bracket the answer, or the cap is reached.
//! 2. **Bisect**: measure the middle of the bracket until its width
//!    (fail - pass) / pass is at most the precision.
//! 3. **Confirm**: measure the answer again. A fail there is noise (the
//!    same rate passed before): the bracket's top comes down to it and the
//!    search goes on below, at most [`MAX_CONFIRMS`] times.
//!
//! Every pass above a fail among the steps is reported as [`Noise`].

use iolab_model::capacity::{Noise, SearchStage};

/// Confirmations before the search stops and reports the noise.
pub const MAX_CONFIRMS: u32 = 3;
/// The lowest rate tried, req/s.
pub const MIN_RATE: f64 = 0.5;

/// The search's bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// First rate, req/s.
    pub start_rps: f64,
    /// Highest rate tried, req/s.
    pub max_rps: f64,
    /// Bracket width to stop at, as a fraction (0.05 = 5%).
    pub precision: f64,
    /// Most steps.
    pub max_steps: usize,
}

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    /// Hold this rate for one step.
    Measure {
        /// Offered rate, req/s.
        rate: f64,
        /// Part of the search.
        stage: SearchStage,
    },
    /// Stop: the answer is final, for this reason.
    Done(End),
}

/// Why the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The bracket is narrow enough and its bottom passed twice.
    Converged,
    /// Every rate up to the cap passed.
    Cap,
    /// Even the lowest rate failed.
    NothingPassed,
    /// The step budget ran out.
    Budget,
    /// Confirmations kept failing: the verdicts are noise.
    Noisy,
}

/// The state: every verdict so far.
#[derive(Debug, Clone)]
pub struct Search {
    bounds: Bounds,
    steps: Vec<(f64, bool, SearchStage)>,
    confirms: u32,
    /// A confirmation is owed at this rate (the bracket converged).
    confirming: Option<f64>,
}

impl Search {
    /// A new search.
    pub fn new(bounds: Bounds) -> Search {
        Search {
            bounds,
            steps: Vec::new(),
            confirms: 0,
            confirming: None,
        }
    }

    /// Record the verdict of the step just measured.
    pub fn record(&mut self, rate: f64, passed: bool, stage: SearchStage) {
        self.steps.push((rate, passed, stage));
        if stage == SearchStage::Confirm {
            self.confirms += 1;
            self.confirming = None;
        }
    }

    /// The highest rate that passed and has no fail at or below it.
    pub fn answer(&self) -> Option<f64> {
        let lowest_fail = self.lowest_fail();
        self.steps
            .iter()
            .filter(|(r, ok, _)| *ok && lowest_fail.is_none_or(|f| *r < f))
            .map(|(r, _, _)| *r)
            .reduce(f64::max)
    }

    /// The lowest rate that failed.
    pub fn lowest_fail(&self) -> Option<f64> {
        self.steps
            .iter()
            .filter(|(_, ok, _)| !ok)
            .map(|(r, _, _)| *r)
            .reduce(f64::min)
    }

    /// Passes at or above a fail: the noise met.
    pub fn noise(&self) -> Vec<Noise> {
        let mut out = Vec::new();
        for &(p, ok, _) in &self.steps {
            if !ok {
                continue;
            }
            let below = self
                .steps
                .iter()
                .filter(|(f, ok, _)| !ok && *f <= p)
                .map(|(f, _, _)| *f)
                .reduce(f64::min);
            if let Some(f) = below {
                out.push(Noise {
                    passed_rps: p,
                    failed_rps: f,
                });
            }
        }
        out
    }

    /// What to measure next, or why to stop.
    pub fn next_step(&mut self) -> Next {
        let b = self.bounds;
        if self.steps.len() >= b.max_steps {
            return Next::Done(End::Budget);
        }
        let Some(&(last, _, _)) = self.steps.last() else {
            return measure(b.start_rps.clamp(MIN_RATE, b.max_rps), SearchStage::Ramp);
        };
        let (lo, hi) = (self.answer(), self.lowest_fail());
        match (lo, hi) {
            (None, None) => measure(last, SearchStage::Ramp),
            (Some(lo), None) if lo >= b.max_rps => Next::Done(End::Cap),
            (Some(lo), None) => measure((lo * 2.0).min(b.max_rps), SearchStage::Ramp),
            (None, Some(hi)) if hi / 2.0 < MIN_RATE => Next::Done(End::NothingPassed),
            (None, Some(hi)) => measure(hi / 2.0, SearchStage::Ramp),
            (Some(lo), Some(hi)) if (hi - lo) / lo > b.precision => {
                measure(round((lo + hi) / 2.0), SearchStage::Bisect)
            }
            (Some(lo), Some(_)) => {
                let confirmed = self
                    .steps
                    .iter()
                    .filter(|(r, ok, _)| *ok && *r == lo)
                    .count()
                    >= 2;
                if confirmed || self.confirming == Some(lo) {
                    return Next::Done(End::Converged);
                }
                if self.confirms >= MAX_CONFIRMS {
                    return Next::Done(End::Noisy);
                }
                self.confirming = Some(lo);
                measure(lo, SearchStage::Confirm)
            }
        }
    }
}

fn measure(rate: f64, stage: SearchStage) -> Next {
    Next::Measure { rate, stage }
}

/// Rates to a tenth of a request per second (easier to read, and a rerun
/// at "the same" rate is the same rate).
fn round(r: f64) -> f64 {
    (r * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds() -> Bounds {
        Bounds {
            start_rps: 10.0,
            max_rps: 10_000.0,
            precision: 0.05,
            max_steps: 40,
        }
    }

    /// Run a search against a service whose verdict is `pass(rate, n)`.
    fn run(b: Bounds, pass: impl Fn(f64, usize) -> bool) -> (Search, End) {
        let mut s = Search::new(b);
        loop {
            match s.next_step() {
                Next::Measure { rate, stage } => {
                    let n = s.steps.len();
                    s.record(rate, pass(rate, n), stage)
                }
                Next::Done(end) => return (s, end),
            }
        }
    }

    #[test]
    fn brackets_then_bisects_to_the_precision() {
        let (s, end) = run(bounds(), |r, _| r <= 200.0);
        assert_eq!(end, End::Converged);
        let lo = s.answer().unwrap();
        let hi = s.lowest_fail().unwrap();
        assert!((190.0..=200.0).contains(&lo), "{lo}");
        assert!((hi - lo) / lo <= 0.05, "{lo}..{hi}");
        assert!(s.noise().is_empty());
        assert_eq!(
            s.steps
                .iter()
                .filter(|x| x.2 == SearchStage::Confirm)
                .count(),
            1
        );
    }

    #[test]
    fn a_failing_start_ramps_down() {
        let (s, end) = run(bounds(), |r, _| r <= 3.0);
        assert_eq!(end, End::Converged);
        assert!(s.answer().unwrap() <= 3.0 && s.answer().unwrap() > 2.8);
        let (_, end) = run(bounds(), |_, _| false);
        assert_eq!(end, End::NothingPassed);
        let (s, end) = run(bounds(), |_, _| true);
        assert_eq!((end, s.answer()), (End::Cap, Some(10_000.0)));
    }

    #[test]
    fn a_lucky_pass_is_caught_by_the_confirmation_and_reported() {
        // 300 passes once by luck; every later try at it fails.
        let lucky = |r: f64, n: usize| r <= 200.0 || (r == 320.0 && n < 6);
        let (s, end) = run(bounds(), lucky);
        assert_eq!(end, End::Converged);
        assert!(s.answer().unwrap() <= 200.0, "{:?}", s.steps);
        let noise = s.noise();
        assert!(!noise.is_empty(), "{:?}", s.steps);
        assert!(noise.iter().all(|n| n.passed_rps >= n.failed_rps));
    }

    #[test]
    fn a_service_that_flips_forever_ends_noisy_within_the_budget() {
        let flip = |_r: f64, n: usize| n.is_multiple_of(2);
        let (s, end) = run(bounds(), flip);
        assert!(
            matches!(end, End::Noisy | End::Budget | End::Converged),
            "{end:?}"
        );
        assert!(s.steps.len() <= 40);
    }
}
