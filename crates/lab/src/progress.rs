//! Live progress of an experiment through observer hooks that do nothing by
//! default ([`Observer`], several at once through [`Observers`]). What shows
//! them lives with its user: `iolab run`'s console (crates/cli/src/console.rs),
//! the live page (crates/live).

use std::sync::Arc;
use std::time::Duration;

use iolab_loadgen::LiveFeed;
use iolab_model::experiment::{ExperimentPlan, RunSpec};
use iolab_model::runs::{RunRecord, RunsFile};
use iolab_model::telemetry::TelemetryPoint;

/// What a run is doing now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Starting the target and waiting for `/health`.
    Starting,
    /// Checking the target contract.
    Verifying,
    /// Load that is not counted.
    WarmingUp,
    /// The measured load.
    Measuring,
    /// Stopping the target and waiting for its sockets to drain.
    Stopping,
    /// An in-process batch.
    Batch,
}

impl Stage {
    /// A short word for progress lines.
    pub fn label(self) -> &'static str {
        match self {
            Stage::Starting => "starting",
            Stage::Verifying => "verifying",
            Stage::WarmingUp => "warming up",
            Stage::Measuring => "measuring",
            Stage::Stopping => "stopping",
            Stage::Batch => "running batch",
        }
    }
}

/// The live numbers of the load being sent: the generator's own snapshot.
pub use iolab_loadgen::Progress as Live;

/// Hooks called by the runner; all optional.
pub trait Observer: Sync {
    /// Before the first run; `total` counts runs x reps.
    fn experiment_started(&self, _plan: &ExperimentPlan, _total: usize, _estimate: Duration) {}
    /// A run (one repetition) begins; `index` is 0-based.
    fn run_started(&self, _index: usize, _total: usize, _spec: &RunSpec, _rep: u32) {}
    /// The run moved to another stage.
    fn stage(&self, _spec: &RunSpec, _stage: Stage) {}
    /// Live numbers during warm-up and measurement (about every 250 ms).
    fn live(&self, _spec: &RunSpec, _stage: Stage, _live: &Live) {}
    /// A run (all its repetitions) has its record.
    fn run_finished(&self, _index: usize, _total: usize, _record: &RunRecord) {}
    /// Everything is written.
    fn experiment_finished(&self, _runs: &RunsFile) {}
    /// A one-line message about the experiment as a whole (e.g. the
    /// backends started for it).
    fn note(&self, _msg: &str) {}
    /// A live feed for the attacks of the runs (`--live`), or none; asked
    /// before each attack, which begins it afresh.
    fn feed(&self) -> Option<Arc<LiveFeed>> {
        None
    }
    /// One sample of the target's telemetry, taken at `unix_ms`, while the
    /// run is measured (about every 100 ms).
    fn telemetry(&self, _spec: &RunSpec, _unix_ms: f64, _point: &TelemetryPoint) {}
}

/// Several observers as one, each called in turn (criterion's `Reports`).
pub struct Observers<'a>(pub Vec<&'a dyn Observer>);

impl Observer for Observers<'_> {
    fn experiment_started(&self, plan: &ExperimentPlan, total: usize, estimate: Duration) {
        self.0
            .iter()
            .for_each(|o| o.experiment_started(plan, total, estimate));
    }
    fn run_started(&self, index: usize, total: usize, spec: &RunSpec, rep: u32) {
        self.0
            .iter()
            .for_each(|o| o.run_started(index, total, spec, rep));
    }
    fn stage(&self, spec: &RunSpec, stage: Stage) {
        self.0.iter().for_each(|o| o.stage(spec, stage));
    }
    fn live(&self, spec: &RunSpec, stage: Stage, live: &Live) {
        self.0.iter().for_each(|o| o.live(spec, stage, live));
    }
    fn run_finished(&self, index: usize, total: usize, record: &RunRecord) {
        self.0
            .iter()
            .for_each(|o| o.run_finished(index, total, record));
    }
    fn experiment_finished(&self, runs: &RunsFile) {
        self.0.iter().for_each(|o| o.experiment_finished(runs));
    }
    fn note(&self, msg: &str) {
        self.0.iter().for_each(|o| o.note(msg));
    }
    /// The first observer's feed that there is.
    fn feed(&self) -> Option<Arc<LiveFeed>> {
        self.0.iter().find_map(|o| o.feed())
    }
    fn telemetry(&self, spec: &RunSpec, unix_ms: f64, point: &TelemetryPoint) {
        self.0
            .iter()
            .for_each(|o| o.telemetry(spec, unix_ms, point));
    }
}

/// An observer that shows nothing.
#[derive(Debug, Default)]
pub struct Silent;

impl Observer for Silent {}
