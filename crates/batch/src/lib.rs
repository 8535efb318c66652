//! In-process batch experiments: master/worker (E1) and futures over a blocking service (E3).

use std::sync::atomic::AtomicBool;

use iolab_model::batch::{BatchResult, BatchSpec};
use iolab_model::{ModelKind, ModelParams};

/// Run one batch to completion (or until `cancel` is set).
pub fn run(_spec: &BatchSpec, model: ModelKind, _params: &ModelParams, _cancel: &AtomicBool) -> BatchResult {
    BatchResult {
        model: Some(model),
        failure: Some("batch executors not built yet".into()),
        ..Default::default()
    }
}
