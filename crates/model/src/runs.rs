//! The results of an experiment: `runs.json`, schema `iolab.runs/1`.
//! Everything a report shows is in here, so a report re-renders without
//! rerunning anything; [`load`] reads one back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::attack::AttackResult;
use crate::batch::BatchResult;
use crate::concurrency::ModelKind;
use crate::environment::Environment;
use crate::experiment::{ExperimentPlan, RunSpec};
use crate::predict::Prediction;
use crate::telemetry::Telemetry;
use crate::verify::VerifyReport;

mod counts;
mod load;

pub use counts::BackendCounts;

pub use load::{load, runs_path, LoadError, MAX_RUNS_JSON, RUNS_JSON};

/// The schema tag of `runs.json`.
pub const RUNS_SCHEMA: &str = "iolab.runs/1";

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Work the real backends counted during the measured part (HTTP runs
    /// whose steps call `pg`, `mc` or `http`), next to `attack.requests`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_counts: Option<BackendCounts>,
    /// Who held what, when: the measured and predicted timelines of a
    /// sample of requests (runs whose spec asks for `spans`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spans: Option<crate::spans::RunSpans>,
    /// The knobs as the target ran them, where its runtime's own defaults
    /// filled in some the run left unset (absent: exactly `spec.params`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_params: Option<crate::knob::ModelParams>,
    /// The knobs as its runtime names and defaults them
    /// (`runtimes/<name>/runtime.toml`), for sentences and what-ifs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knobs: Option<crate::runtime::RuntimeKnobs>,
    /// What the target ran on: the cores it was given and whether its
    /// runtime computes one thread at a time per process (CPython's GIL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::concurrency::Host>,
}

impl RunRecord {
    /// The record of `spec` before anything is measured: its name, model and
    /// coordinates, `outcome`, and every measurement missing.
    pub fn new(spec: RunSpec, outcome: Outcome) -> RunRecord {
        RunRecord {
            name: spec.name.clone(),
            model: spec.model,
            coordinates: spec.coordinates.clone(),
            outcome,
            spec,
            attack: None,
            reps: Vec::new(),
            spread: None,
            batch: None,
            telemetry: Telemetry::default(),
            verify: None,
            prediction: None,
            backend_counts: None,
            spans: None,
            host: None,
            effective_params: None,
            knobs: None,
        }
    }

    /// The knobs the target ran with (its runtime's defaults filled in).
    pub fn params(&self) -> &crate::knob::ModelParams {
        self.effective_params.as_ref().unwrap_or(&self.spec.params)
    }
}

/// The whole `runs.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{HttpWork, Work};
    use std::time::Duration;

    fn record(steps: &str, ok: u64, counts: BackendCounts) -> RunRecord {
        let mut attack = AttackResult::default();
        attack.requests.ok = ok;
        let work = Work::Http(HttpWork::new(
            crate::steps::parse(steps).unwrap(),
            crate::Driver::constant(10.0, Duration::from_secs(1)),
            Duration::from_secs(1),
        ));
        let spec = RunSpec {
            name: "r".into(),
            ..RunSpec::of_model(ModelKind::Pool, Default::default(), 1.0, work)
        };
        RunRecord {
            attack: Some(attack),
            backend_counts: Some(counts),
            ..RunRecord::new(spec, Outcome::Completed)
        }
    }

    #[test]
    fn a_backend_that_did_less_than_the_answers_claim_is_flagged() {
        let counts = BackendCounts::default()
            .with(crate::steps::BackendKind::Pg, 100)
            .with(crate::steps::BackendKind::Mc, 40)
            .with(crate::steps::BackendKind::Http, 500);
        // 100 answers ok: pg did 100 (fine), mc only 40 (short), http more
        // than asked (other traffic on a shared backend: fine).
        let short = record("seq(pg:10,mc:k,http:5)", 100, counts.clone()).backend_shortfall();
        assert_eq!(short.len(), 1, "{short:?}");
        assert!(short[0].starts_with("mc: 100 answers ok"), "{short:?}");
        // Two pg leaves per request need two calls per answer.
        let short = record("par(pg:10,pg:10)", 60, counts.clone()).backend_shortfall();
        assert_eq!(short.len(), 1, "{short:?}");
        assert!(short[0].contains("= 120"), "{short:?}");
        // Nothing counted, nothing flagged.
        let mut r = record("pg:10", 1000, counts);
        r.backend_counts = None;
        assert!(r.backend_shortfall().is_empty());
    }
}
