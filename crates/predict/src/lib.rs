//! Queueing formulas and a discrete-event simulation of every model.

use iolab_model::experiment::RunSpec;
use iolab_model::predict::Prediction;

/// Predict one run on a machine with `cores` CPUs; `None` when the run's
/// model or work has no simulation.
pub fn predict_run(_spec: &RunSpec, _cores: u32) -> Option<Prediction> {
    None
}
