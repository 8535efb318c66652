//! The results of an experiment: `runs.json`, schema `iolab.runs/1`.
//! Everything a report shows is in here, so a report re-renders without
//! rerunning anything.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::attack::AttackResult;
use crate::batch::BatchResult;
use crate::environment::Environment;
use crate::experiment::{ExperimentPlan, RunSpec};
use crate::model_kind::ModelKind;
use crate::predict::Prediction;
use crate::telemetry::Telemetry;
use crate::verify::VerifyReport;

/// The schema tag of `runs.json`.
pub const RUNS_SCHEMA: &str = "iolab.runs/1";

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Outcome {
    /// Measured to the end.
    Completed,
    /// The target did not start or never became healthy.
    StartFailed {
        /// What went wrong.
        detail: String,
    },
    /// The target failed `iolab verify`; nothing was measured.
    VerifyFailed {
        /// Which checks failed.
        detail: String,
    },
    /// The target process exited during the run.
    TargetDied {
        /// Exit status and stderr tail.
        detail: String,
    },
    /// Stopped by the user (Ctrl-C); what was measured is kept.
    Interrupted,
    /// Not run (e.g. a runtime that is not available).
    Skipped {
        /// Why.
        detail: String,
    },
}

impl Outcome {
    /// True for [`Outcome::Completed`].
    pub fn is_completed(&self) -> bool {
        matches!(self, Outcome::Completed)
    }

    /// A short word for tables.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::StartFailed { .. } => "start-failed",
            Outcome::VerifyFailed { .. } => "verify-failed",
            Outcome::TargetDied { .. } => "target-died",
            Outcome::Interrupted => "interrupted",
            Outcome::Skipped { .. } => "skipped",
        }
    }
}

/// Spread over repetitions (min, max) of the key figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Repetitions measured.
    pub reps: u32,
    /// Goodput, req/s.
    pub goodput_rps: (f64, f64),
    /// Latency p50, ms.
    pub p50_ms: (f64, f64),
    /// Latency p99, ms.
    pub p99_ms: (f64, f64),
}

/// One run's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Run name (from the spec).
    pub name: String,
    /// Model.
    pub model: ModelKind,
    /// Sweep coordinates.
    pub coordinates: BTreeMap<String, serde_json::Value>,
    /// How it ended.
    pub outcome: Outcome,
    /// The spec as run (effective, scaled values).
    pub spec: RunSpec,
    /// The median repetition's load result (HTTP runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attack: Option<AttackResult>,
    /// Every repetition, when there was more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reps: Vec<AttackResult>,
    /// Spread across repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// Batch result (batch runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchResult>,
    /// Outside view of the target.
    #[serde(default)]
    pub telemetry: Telemetry,
    /// Contract verification before measuring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyReport>,
    /// What was predicted for this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction: Option<Prediction>,
}

/// The whole `runs.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunsFile {
    /// Always [`RUNS_SCHEMA`].
    pub schema: String,
    /// The plan that was run.
    pub plan: ExperimentPlan,
    /// Runs in order (one per spec, reps folded in).
    pub runs: Vec<RunRecord>,
    /// False when interrupted before every run finished.
    pub complete: bool,
    /// UTC start, RFC 3339.
    pub started_utc: String,
    /// UTC end, RFC 3339.
    #[serde(default)]
    pub finished_utc: Option<String>,
    /// Where it ran.
    pub environment: Environment,
}
