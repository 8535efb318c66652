//! What a capacity search's samples come from: a [`Bench`]. The search,
//! the fit, the binding rules and the what-ifs decide from samples (one
//! [`StepRecord`] per rate held); what produces them is a bench, so the
//! logic can be tested against a service whose truth is known.
//!
//! **Glossary** (one word, one thing):
//! - a **bench** ([`Bench`]) holds a rate against one target and says what
//!   it saw: the real one is a [`Probe`](super::Probe) (the load generator
//!   and the target's telemetry from `/proc`), the simulated one
//!   [`SimBench`](super::sim::SimBench) (`iolab_predict`'s event
//!   simulation of a known service, with dialled noise);
//! - a **rig** ([`Rig`](super::preset::Rig)) is what a preset's searches
//!   share: the started backends, the pinned CPUs, the binary, the
//!   settings; it starts each target and hands its search a probe.

use std::time::Duration;

use iolab_model::capacity::usl::SweepLevel;
use iolab_model::capacity::{CpuSource, Machine, SearchStage, Slo, StepRecord, Windows};

/// Why a bench could not measure a step (the search stops there, and says
/// so in its outcome).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StepError {
    /// The load generator refused the step (a bad request, no socket).
    #[error("{0}")]
    Refused(String),
}

/// The callers that still carry a step's failure as a sentence (a preset's
/// search, whatif's holds) take it as one.
impl From<StepError> for String {
    fn from(e: StepError) -> String {
        e.to_string()
    }
}

/// The machine watched through a search ([`Bench::watch_machine`]).
pub trait MachineWatch {
    /// What the machine did since the watch started; `None` when nothing
    /// could be read.
    fn finish(self: Box<Self>) -> Option<Machine>;
}

impl MachineWatch for super::machine::Watch {
    fn finish(self: Box<Self>) -> Option<Machine> {
        super::machine::Watch::finish(*self)
    }
}

/// Holds rates against one target and says what each did.
pub trait Bench {
    /// Hold `rate` for `duration` and judge it against `slo`.
    fn step(
        &self,
        slo: &Slo,
        rate: f64,
        duration: Duration,
        stage: SearchStage,
    ) -> Result<StepRecord, StepError>;

    /// After `failed`, a step that did not meet `slo`: let the target
    /// recover (a rest after a collapse, then [`Bench::settle`]) before the
    /// next step, so that it is not measured through the last one's queue.
    fn recover(&self, failed: &StepRecord, slo: &Slo, quick: Duration);

    /// A rate's decision from its windows so far (`Some(held)`), their
    /// tally and the windows themselves; a bench judging per endpoint
    /// ([`MixBench`](super::mix::MixBench)) pools per endpoint.
    fn decide(&self, slo: &Slo, tally: &Windows, windows: &[StepRecord]) -> Option<bool> {
        super::windows::decide(slo, tally, windows)
    }

    /// Wait until single requests come back within `quick` again (the
    /// target's queue has drained), bounded by the timeout.
    fn settle(&self, quick: Duration);

    /// The median latency of a few single requests, ms: the unloaded
    /// service time the step length is computed from.
    fn unloaded_ms(&self) -> Option<f64>;

    /// `clients` closed-loop clients for `d` (a level of `--sweep`);
    /// `Ok(None)` when Ctrl-C cut it short.
    fn closed(&self, clients: u32, d: Duration) -> Result<Option<SweepLevel>, StepError>;

    /// The client timeout per request.
    fn timeout(&self) -> Duration;

    /// Ctrl-C was pressed: the search stops at the next step.
    fn cancelled(&self) -> bool;

    /// The target as a search's record names it.
    fn target(&self) -> String;

    /// Start watching the machine's noise through a search (the CPU's
    /// speed where the generator and the target run, the steal); what it
    /// saw comes from [`MachineWatch::finish`] at the search's end.
    fn watch_machine(&self) -> Box<dyn MachineWatch + '_>;

    /// Whose CPU a warm-up's steadiness is judged by: the process tree's
    /// when it is read, else the pinned cores'.
    fn cpu_source(&self) -> CpuSource;

    /// One step outside a search (a warm-up, a copy's hold) at `rate` for
    /// `d`, held to `slo`; when it failed, the target recovers as after a
    /// search's failed step ([`Bench::recover`]) before whatever comes
    /// next, until single requests come back about as fast as its fastest
    /// did. Without it a copy failed hold after hold on the backlog of the
    /// first (r31_22).
    fn step_then_recover(
        &self,
        slo: &Slo,
        rate: f64,
        d: Duration,
    ) -> Result<StepRecord, StepError> {
        let step = self.step(slo, rate, d, SearchStage::Ramp)?;
        if !step.passed {
            self.recover(&step, slo, super::settle_time(step.attack.latency_ms.min));
        }
        Ok(step)
    }
}
