//! In-process batch experiments (E1 master/worker, E3 futures): the spec of a
//! batch run and its `iolab.batch/1` result.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model_kind::{ModelKind, ModelParams};

/// The schema tag of a batch JSON document.
pub const BATCH_SCHEMA: &str = "iolab.batch/1";

/// What tasks a batch runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TaskMix {
    /// E1: `cpu` CPU tasks with terms drawn from `cpu_terms`, `io` IO tasks
    /// with sleeps drawn from `io_ms`, shuffled with the batch's seed.
    Mixed {
        /// Number of CPU tasks.
        cpu: u32,
        /// Number of IO tasks.
        io: u32,
        /// Leibniz term counts to draw from.
        cpu_terms: Vec<u64>,
        /// Sleep durations (ms) to draw from.
        io_ms: Vec<f64>,
    },
    /// E3: `n` calls of one blocking service taking `ms` each.
    Calls {
        /// Number of calls.
        n: u64,
        /// Service time, ms.
        ms: f64,
    },
}

/// How a master hands tasks to workers (E1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerKind {
    /// Sleeps in place, then reports Ready.
    Blocking,
    /// Moves the sleep to a shared pool and reports Ready at once (E1's flawed "non-blocking").
    SharedPool,
    /// A timer: no thread held while waiting.
    Timer,
}

/// Master/worker settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MasterSpec {
    /// Number of workers W.
    pub workers: u32,
    /// Worker behaviour.
    pub worker: WorkerKind,
    /// Shared dispatcher threads D for [`WorkerKind::SharedPool`].
    #[serde(default)]
    pub shared_pool: Option<u32>,
}

/// One batch run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchSpec {
    /// The tasks.
    pub tasks: TaskMix,
    /// A master/worker set-up, or none for a plain executor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master: Option<MasterSpec>,
    /// Seed of the task shuffle and draws (always recorded).
    pub seed: u64,
}

/// Statistics of one task type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskTypeStats {
    /// Tasks of this type.
    pub count: u64,
    /// Mean time from batch start to task completion... split below, ms.
    pub mean_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Mean time waiting for a thread or worker, ms.
    pub wait_mean_ms: f64,
    /// Mean time being served, ms.
    pub service_mean_ms: f64,
}

/// The result of one batch run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchResult {
    /// Executor model.
    pub model: Option<ModelKind>,
    /// Knobs and master settings, flattened for display.
    pub params: BTreeMap<String, serde_json::Value>,
    /// Tasks run.
    pub tasks: u64,
    /// Tasks that failed (e.g. a thread could not be started).
    #[serde(default)]
    pub failed: u64,
    /// Wall time of the whole batch, seconds.
    pub total_s: f64,
    /// Per task type (`cpu`, `io`).
    pub by_type: BTreeMap<String, TaskTypeStats>,
    /// Peak OS threads of the process.
    pub peak_threads: u64,
    /// Peak RSS, MiB.
    pub peak_rss_mb: f64,
    /// CPU seconds / (wall seconds x cores).
    #[serde(default)]
    pub cpu_utilisation: f64,
    /// Why it stopped early, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// A model plus knobs, for batch runs that use [`ModelParams`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchExecutor {
    /// Executor model.
    pub model: ModelKind,
    /// Its knobs.
    pub params: ModelParams,
}
