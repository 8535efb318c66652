//! A prediction of one run, made before (or without) running it:
//! the `iolab.predict/1` document's entries.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The schema tag of a predict JSON document.
pub const PREDICT_SCHEMA: &str = "iolab.predict/1";

/// Predicted latency percentiles, ms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PredictedLatency {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// What a run is expected to do.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Prediction {
    /// Run name.
    pub name: String,
    /// Model name.
    pub model: String,
    /// Requests offered.
    pub offered: u64,
    /// Requests answered 2xx within the timeout.
    pub ok: u64,
    /// ok / offered.
    pub success_ratio: f64,
    /// ok per second of the run.
    pub goodput_rps: f64,
    /// Requests the server completed per second, abandoned ones included.
    #[serde(default)]
    pub throughput_rps: f64,
    /// Latency of successful requests.
    pub latency_ms: PredictedLatency,
    /// Most requests in the server at once.
    pub peak_in_flight: u64,
    /// Most OS threads busy at once, where the model has them.
    #[serde(default)]
    pub peak_threads: Option<u64>,
    /// Capacity of the model for this workload, req/s (closed form).
    #[serde(default)]
    pub capacity_rps: Option<f64>,
    /// When the first client timeout is expected, seconds (closed form).
    #[serde(default)]
    pub first_timeout_s: Option<f64>,
    /// One plain sentence explaining the outcome from the numbers.
    #[serde(default)]
    pub explanation: String,
    /// Failed requests by cause (`timeout`, `reset`, `rejected`, `backend`,
    /// `client-connections`); they add up to offered - ok.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, u64>,
    /// Wall time of the whole run, seconds (a batch's total time; an open
    /// loop's schedule length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_s: Option<f64>,
    /// A held-connection run: what one held connection costs the model and
    /// where it stops (absent on request runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<HeldPrediction>,
}

/// What a held-connection run is predicted to do
/// ([`crate::concurrency::held`] says from what).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HeldPrediction {
    /// Connections the run opens.
    pub connections: u64,
    /// Of them, held at once (the rest wait and time out, or are refused).
    pub held: u64,
    /// OS threads per held connection.
    pub threads_per_connection: f64,
    /// Resident KiB per held connection.
    pub kib_per_connection: f64,
    /// Most it holds at once, when the model bounds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holds: Option<u64>,
    /// What bounds it.
    pub why: String,
}

/// The `iolab.predict/1` document: what `iolab predict --json` prints.
///
/// Fields are in the order `iolab predict --json` has always printed them
/// (alphabetical, as `serde_json::json!` sorted them), so saved documents and
/// new ones compare byte for byte.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PredictFile {
    /// CPUs the target was assumed to have.
    pub cores: u32,
    /// The plan's name (a preset, or `ad-hoc`).
    pub plan: String,
    /// One prediction per run, in plan order.
    pub runs: Vec<Prediction>,
    /// Always [`PREDICT_SCHEMA`].
    pub schema: String,
}

impl PredictFile {
    /// Wrap predictions with the schema tag.
    pub fn new(plan: &str, cores: u32, runs: Vec<Prediction>) -> Self {
        PredictFile {
            cores,
            plan: plan.to_string(),
            runs,
            schema: PREDICT_SCHEMA.to_string(),
        }
    }
}
