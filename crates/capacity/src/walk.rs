//! Holding the rates a search asks for, each until its windows decide it
//! ([`windows`](super::windows)), and keeping every step measured.

use iolab_model::capacity::{SearchStage, Slo, StepRecord, Windows};

use super::search::{End, Next, Search};
use super::GENERATOR_RETRIES;
use super::{settle_time, step_length, Bench, Options, Progress, StepError};

/// The steps a search measured and why it stopped.
pub(super) struct Walk {
    /// Every step measured, in order (retried ones included).
    pub(super) steps: Vec<StepRecord>,
    /// How the search ended (`None`: cancelled, the generator saturated, or
    /// a step failed to run).
    pub(super) end: Option<End>,
    /// The load generator's refusal of a step.
    pub(super) failure: Option<StepError>,
}

/// Why a rate got no decision.
enum Stop {
    /// Cancelled, or a step failed to run (the refusal).
    Cut(Option<StepError>),
    /// The generator was the bottleneck past its retries: the last window's
    /// verdict is recorded and the search stops.
    Saturated(bool),
}

/// What holding rates needs, and what it has measured.
struct Walker<'a> {
    probe: &'a dyn Bench,
    slo: &'a Slo,
    o: &'a Options,
    unloaded_ms: f64,
    each: &'a dyn Progress,
    steps: Vec<StepRecord>,
    /// Fails with no verdict (a late generator) still measured again.
    retries: usize,
}

impl Walker<'_> {
    /// Hold `rate` window after window (each a step) until its windows
    /// decide it ([`Budget`](iolab_model::capacity::Budget)): `Ok(held)`.
    /// A window that failed is recovered from before the next, as a failed
    /// step was; a window with no verdict (the generator was late) is kept in the curve, not
    /// counted, and held again once the service has drained, up to
    /// [`GENERATOR_RETRIES`] times in the search.
    fn decide(&mut self, rate: f64, stage: SearchStage) -> Result<bool, Stop> {
        let quick = settle_time(self.unloaded_ms);
        let length = step_length(
            self.slo,
            self.probe.timeout(),
            self.unloaded_ms,
            self.o,
            rate,
        );
        let mut tally = self.o.budget.tally();
        let first = self.steps.len();
        loop {
            if self.probe.cancelled() {
                return Err(Stop::Cut(None));
            }
            let rec = self
                .probe
                .step(self.slo, rate, length, stage)
                .map_err(|e| Stop::Cut(Some(e)))?;
            if rec.generator_saturated {
                self.each.step(&rec);
                let passed = rec.passed;
                self.steps.push(rec);
                if self.retries == 0 {
                    return Err(Stop::Saturated(passed));
                }
                self.retries -= 1;
                self.probe.settle(quick);
                continue;
            }
            // A target that answers nothing is not there: no further window
            // would tell more (seen.rs says so in the outcome).
            if super::seen::unanswered(&rec) {
                self.each.step(&rec);
                self.steps.push(rec);
                return Err(Stop::Cut(None));
            }
            tally.add(rec.passed);
            let passed = rec.passed;
            self.steps.push(rec);
            let these = &self.steps[first..];
            let counted: Vec<StepRecord> = these
                .iter()
                .filter(|s| !s.generator_saturated)
                .cloned()
                .collect();
            let decided = self.probe.decide(self.slo, &tally, &counted);
            let rec = self.steps.last_mut().expect("just pushed");
            if let Some(held) = decided {
                rec.windows = Some(Windows { held, ..tally });
            }
            self.each.step(rec);
            if !passed {
                let rec = rec.clone();
                self.probe.recover(&rec, self.slo, quick);
            }
            if let Some(held) = decided {
                return Ok(held);
            }
        }
    }
}

/// Measure the rates `search` asks for, each decided by its windows, until
/// it is done, cancelled, or a step cannot run.
pub(super) fn walk(
    search: &mut Search,
    probe: &dyn Bench,
    slo: &Slo,
    o: &Options,
    unloaded_ms: f64,
    each: &dyn Progress,
) -> Walk {
    let mut w = Walker {
        probe,
        slo,
        o,
        unloaded_ms,
        each,
        steps: Vec::new(),
        retries: GENERATOR_RETRIES,
    };
    let (end, failure) = loop {
        let (rate, stage) = match search.next_step() {
            Next::Measure { rate, stage } => (rate, stage),
            Next::Done(end) => break (Some(end), None),
        };
        match w.decide(rate, stage) {
            Ok(held) => search.record(rate, held, stage),
            Err(Stop::Cut(failure)) => break (None, failure),
            Err(Stop::Saturated(passed)) => {
                search.record(rate, passed, stage);
                break (None, None);
            }
        }
    };
    Walk {
        steps: w.steps,
        end,
        failure,
    }
}
