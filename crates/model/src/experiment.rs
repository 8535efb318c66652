//! A typed, validated experiment: what `iolab run` executes, `iolab predict`
//! simulates and every result carries. Preset files (TOML) and CLI flags are
//! turned into an [`ExperimentPlan`] by the `lab` crate; nothing downstream
//! sees TOML or clap.
//!
//! Every value in a [`RunSpec`] is *effective*: already multiplied by the
//! time-scale, which is kept beside it so renderers can show unscaled
//! equivalents.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::batch::BatchSpec;
use crate::concurrency::ModelKind;
use crate::driver::{ConnectionMode, Driver};
use crate::knob::ModelParams;
use crate::runtime::Runtime;
use crate::steps::Step;
use crate::units::secs;

/// A whole experiment: a list of runs (a sweep already expanded), repeated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExperimentPlan {
    /// Preset name, e.g. `showdown`.
    pub name: String,
    /// One line on what it shows.
    pub description: String,
    /// The preset file it came from, if any.
    #[serde(default)]
    pub source: Option<String>,
    /// Time-scale factor (0 < scale <= 1) applied to every run.
    pub scale: f64,
    /// Repetitions of every run.
    pub reps: u32,
    /// Warm-up length before each measured run (not counted).
    #[serde(rename = "warmup_s", with = "secs")]
    #[schemars(with = "f64")]
    pub warmup: Duration,
    /// At most this many warm-up requests per run (`None`: the warm-up's
    /// length alone bounds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_requests: Option<u64>,
    /// The runs, in order.
    pub runs: Vec<RunSpec>,
    /// Published numbers of a classic experiment, as data for the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<serde_json::Value>,
    /// Pin target and generator to different CPUs (false: both share every
    /// CPU, for targets that need the cores, e.g. processes against a GIL).
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub pin: bool,
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

/// One run of an experiment: one target (model) under one load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunSpec {
    /// Unique within the experiment, built from the coordinates, e.g. `pool-rate=450`.
    pub name: String,
    /// The sweep values that pick this run out, e.g. `{"model":"pool","rate":450}`.
    pub coordinates: BTreeMap<String, serde_json::Value>,
    /// Concurrency model.
    pub model: ModelKind,
    /// Where the target runs.
    #[serde(default)]
    pub runtime: Runtime,
    /// Model knobs.
    #[serde(default)]
    pub params: ModelParams,
    /// The time-scale already applied to the values below.
    pub scale: f64,
    /// Record who held what for a sample of this many requests (tasks): the
    /// first N (see [`crate::spans`]); absent = no spans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spans: Option<u32>,
    /// What the run does.
    pub work: Work,
}

impl RunSpec {
    /// A run of the built-in `model` named after it, its one coordinate the
    /// model: what `iolab batch` and `iolab predict` run for each model they
    /// are given (a preset names and places its runs itself).
    pub fn of_model(model: ModelKind, params: ModelParams, scale: f64, work: Work) -> RunSpec {
        RunSpec {
            name: model.as_str().to_string(),
            coordinates: BTreeMap::from([("model".to_string(), serde_json::json!(model.as_str()))]),
            model,
            runtime: Runtime::default(),
            params,
            scale,
            spans: None,
            work,
        }
    }
}

/// A served HTTP load or an in-process batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Work {
    /// Load sent over HTTP to a target process.
    Http(HttpWork),
    /// A batch of tasks run inside one process (E1, E3).
    Batch(BatchSpec),
}

/// HTTP load against a target serving `/work?steps=...`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HttpWork {
    /// What each request does.
    pub steps: Step,
    /// Open or closed loop.
    pub driver: Driver,
    /// Connection handling.
    #[serde(default)]
    pub connections: ConnectionMode,
    /// Client timeout per request.
    #[serde(rename = "timeout_s", with = "secs")]
    #[schemars(with = "f64")]
    pub timeout: Duration,
    /// Series interval.
    #[serde(rename = "interval_s", with = "secs")]
    #[schemars(with = "f64")]
    pub interval: Duration,
    /// A custom target command (argv) instead of a built-in one; it must print
    /// its URL as the first stdout line or serve `/health` on `{port}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// What the target answers with (`/work?...&body=value`); JSON by default.
    #[serde(default, skip_serializing_if = "WorkBody::is_json")]
    pub body: WorkBody,
    /// A foreign target: the user's own service and request, instead of
    /// `/work?steps=` (the steps then only describe it to `predict`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreign: Option<Box<crate::request::ForeignSpec>>,
    /// Held connections instead of requests (`driver = "held"`): WebSockets
    /// to the contract's `/ws?steps=...`, each message running `steps`;
    /// `driver` is then the open loop of connection opens, as a held
    /// attack's document says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<HeldLoad>,
}

/// A held-connection load of a run (preset `[held]`): `connections`
/// WebSockets opened at `open_rate`, each held for `hold` and sent
/// `message_rate` messages a second; what `iolab attack ws://...` does
/// with the same names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HeldLoad {
    /// WebSockets to open and hold.
    pub connections: u32,
    /// Opened per second.
    pub open_rate: f64,
    /// How long each is held once established.
    #[serde(rename = "hold_s", with = "secs")]
    #[schemars(with = "f64")]
    pub hold: Duration,
    /// Messages per connection per second.
    pub message_rate: f64,
    /// The text of each message (after its sequence number).
    pub message: String,
    /// Connect from these addresses in turn (past ~14,000 connections to
    /// one server from one address, every connect walks the port range).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_addrs: Vec<std::net::IpAddr>,
}

impl HeldLoad {
    /// The open loop of connection opens: `connections` at `open_rate`.
    pub fn opens(&self) -> Driver {
        let secs = f64::from(self.connections) / self.open_rate;
        Driver::constant(self.open_rate, Duration::from_secs_f64(secs))
    }

    /// The same load with durations multiplied and rates divided by
    /// `factor` (the time-scale), so connections held stay the same.
    pub fn scaled(&self, factor: f64) -> HeldLoad {
        HeldLoad {
            hold: self.hold.mul_f64(factor),
            open_rate: self.open_rate / factor,
            message_rate: self.message_rate / factor,
            ..self.clone()
        }
    }

    /// The attack plan of this load against a built-in or runtime target
    /// at `base` (`http://HOST:PORT`): `/ws?steps=...` on the same port.
    pub fn plan(&self, base: &str, steps: &Step, timeout: Duration) -> crate::attack::HeldPlan {
        let ws = base
            .replacen("https://", "wss://", 1)
            .replacen("http://", "ws://", 1);
        crate::attack::HeldPlan {
            target: format!("{ws}/ws?steps={steps}"),
            kind: crate::attack::HeldKind::Ws,
            connections: self.connections,
            open_rate: self.open_rate,
            hold: self.hold,
            message_rate: self.message_rate,
            message: self.message.clone(),
            timeout,
            insecure: false,
            grpc: None,
            metadata: Vec::new(),
            source_addrs: self.source_addrs.clone(),
            shard: None,
        }
    }
}

impl HttpWork {
    /// `steps` under `driver` on the target contract, with the defaults a
    /// preset gets when it says nothing more: connections reused, telemetry
    /// every second, a built-in target, a JSON answer.
    pub fn new(steps: Step, driver: Driver, timeout: Duration) -> HttpWork {
        HttpWork {
            steps,
            driver,
            connections: ConnectionMode::default(),
            timeout,
            interval: Duration::from_secs(1),
            command: None,
            body: WorkBody::default(),
            foreign: None,
            held: None,
        }
    }
}

/// What a `/work` answer carries: the `body` query parameter of the target
/// contract (docs/serve.md).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum WorkBody {
    /// The small JSON summary `{"ok":true,"model":..,"steps":..,"elapsed_ms":..}`.
    #[default]
    Json,
    /// The bytes of the last `mc` step's value, as the original E4 server
    /// sent its cached value back to the client (`application/octet-stream`).
    Value,
}

/// A `body=` value that names no [`WorkBody`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("query parameter 'body' is '{0}': expected 'json' (the default) or 'value'")]
pub struct UnknownWorkBody(pub String);

impl WorkBody {
    /// The name used in the query and in presets.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkBody::Json => "json",
            WorkBody::Value => "value",
        }
    }

    /// Parse the query parameter's value.
    pub fn parse(text: &str) -> Result<WorkBody, UnknownWorkBody> {
        match text {
            "json" => Ok(WorkBody::Json),
            "value" => Ok(WorkBody::Value),
            other => Err(UnknownWorkBody(other.to_string())),
        }
    }

    /// Whether this is the default (JSON) answer.
    pub fn is_json(&self) -> bool {
        *self == WorkBody::Json
    }

    /// What to append to `/work?steps=...` for this answer (nothing for JSON,
    /// so default URLs stay as they were).
    pub fn query_suffix(self) -> &'static str {
        match self {
            WorkBody::Json => "",
            WorkBody::Value => "&body=value",
        }
    }

    /// The contract's request URL of a built-in target at `base`: its
    /// `/work` with `steps` (and this answer) in the query.
    pub fn work_url(self, base: &str, steps: &crate::Step) -> String {
        format!("{base}/work?steps={steps}{}", self.query_suffix())
    }
}
