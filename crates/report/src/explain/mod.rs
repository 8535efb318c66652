//! One plain sentence per run that states its outcome and its cause from the
//! run's own numbers: Little's law (in flight needed = rate x S) against the
//! model's capacity, the queue's growth above it, when timeouts had to
//! start, the error classes, and what the kernel saw at the target's port.
//! A number that was not recorded, or that the target failed to report, is
//! not guessed: the sentence says less. What could make the numbers wrong
//! (a flagged generator, missing samples, a backend that counted fewer
//! calls) goes into separate short caveats ([`caveats`]), only when it
//! matters. One file per kind of run: [`http`], [`batch`].

mod batch;
mod caveats;
mod http;

pub use caveats::{after_overload, caveats, generator_doubt};

use iolab_model::concurrency::{Capacity, Host};
use iolab_model::experiment::Work;
use iolab_model::runs::{Outcome, RunRecord};
use iolab_model::{ModelKind, ModelParams};

use crate::numbers::{count, rate, secs};
use crate::summary::label;

/// The capacity of a model for blocking IO (its [`Shape`]); `None` when it
/// depends on a number that was not recorded (the core count for event-loop
/// workers).
pub(crate) fn capacity(model: ModelKind, p: &ModelParams, cores: Option<u32>) -> Option<Capacity> {
    let on = |cores: u32| model.shape(p, &Host::cores(cores)).capacity();
    match cores {
        Some(c) => Some(on(c)),
        // Unknown cores matter only when the capacity follows them.
        None => Some(on(1)).filter(|c| *c == on(2)),
    }
}

/// Write a time as run and, when the run was scaled, unscaled beside it.
pub(crate) struct Clock {
    /// The time-scale the run was measured at.
    pub(crate) scale: f64,
}

impl Clock {
    fn scaled(&self) -> bool {
        (self.scale - 1.0).abs() > 1e-12
    }

    pub(crate) fn secs(&self, s: f64) -> String {
        if self.scaled() {
            format!("{} ({} unscaled)", secs(s), secs(s / self.scale))
        } else {
            secs(s)
        }
    }

    pub(crate) fn ms(&self, v: f64) -> String {
        self.secs(v / 1e3)
    }

    pub(crate) fn rate(&self, r: f64) -> String {
        if self.scaled() {
            format!("{} req/s ({} unscaled)", rate(r), rate(r * self.scale))
        } else {
            format!("{} req/s", rate(r))
        }
    }
}

/// The one-sentence explanation of a run (event-loop defaults unknown).
pub fn explain(run: &RunRecord) -> String {
    explain_with_cores(run, None)
}

/// The one-sentence explanation, knowing the machine's cores (the default
/// number of event-loop workers).
pub fn explain_with_cores(run: &RunRecord, cores: Option<u32>) -> String {
    let who = label(run);
    let clock = Clock {
        scale: run.spec.scale,
    };
    let sentence = match (&run.outcome, &run.spec.work) {
        (Outcome::Completed | Outcome::Interrupted, Work::Http(_)) if run.attack.is_some() => {
            http::sentence(run, &who, &clock, cores)
        }
        (Outcome::Completed | Outcome::Interrupted, Work::Batch(_)) if run.batch.is_some() => {
            batch::sentence(run, &who, &clock, cores)
        }
        (Outcome::Completed, _) => format!("{who} completed but recorded no result"),
        (Outcome::Interrupted, _) => format!("{who} was interrupted before anything was measured"),
        (
            Outcome::StartFailed { detail }
            | Outcome::VerifyFailed { detail }
            | Outcome::TargetDied { detail }
            | Outcome::Skipped { detail },
            _,
        ) => {
            let what = match &run.outcome {
                Outcome::StartFailed { .. } => "did not start",
                Outcome::VerifyFailed { .. } => "failed verification",
                Outcome::TargetDied { .. } => "died during the run",
                _ => "was skipped",
            };
            let measured = match &run.attack {
                Some(a) => format!(
                    "; measured until then: {} ok of {} planned",
                    count(a.requests.ok),
                    count(a.requests.planned)
                ),
                None => "; nothing measured".into(),
            };
            format!("{who} {what} ({}){measured}", one_line(detail))
        }
    };
    format!("{sentence}.")
}

pub(crate) fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{} {word}s", count(n))
    }
}

pub(crate) fn one_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    line.trim_end_matches('.').to_string()
}
