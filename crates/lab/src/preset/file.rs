//! The shape of a preset file (`presets/*.toml`), as written by people.
//! Every table refuses unknown fields; values validate as they are read
//! (see [`values`](super::values)). Any field typed `OneOrMany` may be a list:
//! that makes it a sweep axis. `presets/README.md` documents every field.

use std::collections::BTreeMap;

use serde::Deserialize;

use iolab_model::batch::WorkerKind;
use iolab_model::experiment::WorkBody;
use iolab_model::{ModelKind, Runtime};

use super::values::{Count, Dur, DurOrZero, OneOrMany, Positive, Scale, StepsText};

/// A whole preset file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PresetFile {
    /// Short name, used for the results folder.
    pub name: String,
    /// One line on what the experiment shows.
    pub description: String,
    /// `http` (load over HTTP against target processes) or `batch` (in process).
    #[serde(default)]
    pub kind: WorkKind,
    /// Default time-scale (the command line's `--scale` wins).
    #[serde(default)]
    pub scale: Option<Scale>,
    /// Repetitions of every run (the command line's `--reps` wins).
    #[serde(default)]
    pub reps: Option<Count>,
    /// Warm-up before each measured HTTP run, not counted (`"0s"`: none).
    #[serde(default)]
    pub warmup: Option<DurOrZero>,
    /// At most this many warm-up requests per run: a real endpoint's
    /// requests cost a database call each, and the warm-up's are not counted.
    #[serde(default)]
    pub warmup_requests: Option<Count>,
    /// Published numbers of a classic experiment, kept as data for the report.
    #[serde(default)]
    pub published: Option<toml::Value>,
    /// Pin target and generator to different CPUs (default true).
    #[serde(default)]
    pub pin: Option<bool>,
    /// The load (kind = "http").
    #[serde(default)]
    pub load: Option<LoadSection>,
    /// Held connections (`[load] driver = "held"`).
    #[serde(default)]
    pub held: Option<HeldSection>,
    /// The batch (kind = "batch").
    #[serde(default)]
    pub batch: Option<BatchSection>,
    /// The targets (models and their knobs), `[[targets]]`.
    pub targets: Vec<TargetSection>,
    /// `iolab capacity PRESET`: the objective and the search's settings
    /// (read by `capacity::preset`; `iolab run` ignores it).
    #[serde(default)]
    pub capacity: Option<toml::Value>,
    /// `iolab whatif PRESET`: what the pair checks (read by `whatif`;
    /// `iolab run` and `iolab capacity` ignore it).
    #[serde(default)]
    pub whatif: Option<toml::Value>,
    /// Who held what: a span sample of some runs (`[spans]`).
    #[serde(default)]
    pub spans: Option<SpansSection>,
}

/// `[spans]`: record who held what for the first `sample` requests (tasks)
/// of the runs at the coordinates `when` names (all runs without it).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpansSection {
    /// Requests (tasks) per run.
    pub sample: Count,
    /// Only the runs at these coordinates, e.g. `{ rate = 400 }`.
    #[serde(default)]
    pub when: Option<BTreeMap<String, toml::Value>>,
}

/// What runs do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkKind {
    /// HTTP load against target processes.
    #[default]
    Http,
    /// In-process batches of tasks.
    Batch,
}

/// Open or closed loop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverKind {
    /// A computed arrival schedule (vegeta, artillery).
    #[default]
    Open,
    /// Clients waiting for their answers (wrk, ab).
    Closed,
    /// WebSockets held open, each sending messages (`[held]`).
    Held,
}

/// `[held]`: the WebSockets of a `driver = "held"` load, each to the
/// contract's `/ws?steps=STEPS` (every message runs `load.steps`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldSection {
    /// WebSockets to hold (the sweep axis `held`).
    pub connections: OneOrMany<Count>,
    /// Opened per second (default 100, as `iolab attack`).
    #[serde(default)]
    pub open_rate: Option<Positive>,
    /// How long each is held once established.
    pub hold: Dur,
    /// Messages per connection per second (default 1; 0 holds silently).
    #[serde(default)]
    pub message_rate: Option<f64>,
    /// The text of each message (default `hello`).
    #[serde(default)]
    pub message: Option<String>,
    /// Addresses to connect from in turn, e.g. `["127.0.0.1", "127.0.0.2"]`.
    #[serde(default)]
    pub source_addrs: Vec<std::net::IpAddr>,
}

/// Arrival process of an open loop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArrivalKind {
    /// Evenly spaced.
    #[default]
    Constant,
    /// Exponential gaps (seeded).
    Poisson,
}

/// How requests use connections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConnectionKind {
    /// A pool of kept-alive connections.
    #[default]
    KeepAlive,
    /// One fresh connection per request.
    NewPerRequest,
}

/// `[load]`: the HTTP load of every run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSection {
    /// What each request does (`/work?steps=...`).
    pub steps: OneOrMany<StepsText>,
    /// `open` (default) or `closed`.
    #[serde(default)]
    pub driver: DriverKind,
    /// Open loop: requests per second.
    #[serde(default)]
    pub rate: Option<OneOrMany<Positive>>,
    /// Open loop: `constant` (default) or `poisson`.
    #[serde(default)]
    pub arrival: ArrivalKind,
    /// Seed of Poisson gaps.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Closed loop: clients.
    #[serde(default)]
    pub concurrency: Option<OneOrMany<Count>>,
    /// Closed loop: stop after this many requests.
    #[serde(default)]
    pub requests: Option<OneOrMany<Count>>,
    /// Length of the measured run.
    #[serde(default)]
    pub duration: Option<OneOrMany<Dur>>,
    /// Client timeout per request (default 10s, artillery's).
    #[serde(default)]
    pub timeout: Option<OneOrMany<Dur>>,
    /// `keep-alive` (default) or `new-per-request`.
    #[serde(default)]
    pub connections: Option<OneOrMany<ConnectionKind>>,
    /// Most connections open at once.
    #[serde(default)]
    pub max_connections: Option<Count>,
    /// Width of one series interval (default 500ms).
    #[serde(default)]
    pub interval: Option<Dur>,
    /// What the target answers: `json` (default) or `value` (the last `mc`
    /// step's value, `/work?...&body=value`).
    #[serde(default)]
    pub body: WorkBody,
}

/// `[[targets]]`: one model (or a list of models), where it runs, and its
/// knobs and runtime options.
#[derive(Debug, Deserialize)]
pub struct TargetSection {
    /// Concurrency model(s).
    pub model: OneOrMany<ModelKind>,
    /// A label that replaces the model's name in run names.
    #[serde(default)]
    pub label: Option<String>,
    /// Where the target runs: `rust` (built in) or a runtime folder under `runtimes/`.
    #[serde(default)]
    pub runtime: Runtime,
    /// A custom target command (argv) instead of a built-in or runtime one.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// HTTP presets: this target's own workload, replacing `load.steps`
    /// (E5 runs `seq(...)` on one target and `par(...)` on another).
    #[serde(default)]
    pub steps: Option<OneOrMany<StepsText>>,
    /// Open-loop HTTP presets: this target's own rates, replacing `load.rate`.
    #[serde(default)]
    pub rate: Option<OneOrMany<Positive>>,
    /// A foreign target (a user's own service): its base URL, when it is
    /// already running (else iolab starts `command`).
    #[serde(default)]
    pub url: Option<String>,
    /// A foreign target's request, sent instead of `/work?steps=`.
    #[serde(default)]
    pub request: Option<RequestSection>,
    /// A foreign target's health path (default: its request path answering
    /// anything but a 5xx).
    #[serde(default)]
    pub health: Option<String>,
    /// A foreign target's PID, for `/proc` telemetry of a service iolab did
    /// not start.
    #[serde(default)]
    pub pid: Option<u32>,
    /// A foreign target's own Prometheus endpoint, a path or a URL.
    #[serde(default)]
    pub metrics: Option<String>,
    /// The series kept from `metrics`.
    #[serde(default)]
    pub series: Option<Vec<String>>,
    /// HTTPS: accept a foreign target's certificate whatever it is.
    #[serde(default)]
    pub insecure: Option<bool>,
    /// Everything else: knobs (`threads = 20`, any of the knob list) and the
    /// runtime's options (`synchronized = true`), each a value or a sweep.
    /// Checked by name when the preset is expanded.
    #[serde(flatten)]
    pub settings: BTreeMap<String, OneOrMany<Setting>>,
}

/// `request = { method, path, headers, body }` of a foreign target.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestSection {
    /// HTTP method (default GET).
    #[serde(default)]
    pub method: Option<String>,
    /// Path and query, e.g. `/api/orders?id=1`.
    pub path: String,
    /// Headers, `{ "Content-Type" = "application/json" }`.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The body, as text.
    #[serde(default)]
    pub body: Option<String>,
}

/// The value of a knob (a count) or of a runtime option (a flag).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Setting {
    /// A knob's value.
    Count(u64),
    /// A runtime option's value.
    Flag(bool),
}

impl<'de> Deserialize<'de> for Setting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Setting;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number (a knob) or true/false (a runtime option)")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Setting, E> {
                Ok(Setting::Count(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Setting, E> {
                u64::try_from(v).map(Setting::Count).map_err(|_| {
                    E::custom(format!(
                        "{v} is below zero: give a whole number of 1 or more"
                    ))
                })
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Setting, E> {
                Ok(Setting::Flag(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// Task mixes of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TasksKind {
    /// E1: shuffled CPU and IO tasks.
    Mixed,
    /// E3: n calls of one blocking service.
    Calls,
}

/// `[batch]`: the tasks of every batch run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchSection {
    /// `mixed` or `calls`.
    pub tasks: TasksKind,
    /// `calls`: number of calls.
    #[serde(default)]
    pub n: Option<OneOrMany<Count>>,
    /// `calls`: service time, ms.
    #[serde(default)]
    pub ms: Option<OneOrMany<Positive>>,
    /// `mixed`: CPU tasks.
    #[serde(default)]
    pub cpu: Option<u32>,
    /// `mixed`: IO tasks.
    #[serde(default)]
    pub io: Option<u32>,
    /// Where IO tasks wait: `sleep` (default), `http` or `pg` (one real call each).
    #[serde(default)]
    pub backend: Option<iolab_model::steps::BackendKind>,
    /// `mixed`: Leibniz term counts to draw from.
    #[serde(default)]
    pub cpu_terms: Option<Vec<u64>>,
    /// `mixed`: sleeps (ms) to draw from.
    #[serde(default)]
    pub io_ms: Option<Vec<f64>>,
    /// Master/worker: number of workers W.
    #[serde(default)]
    pub workers: Option<OneOrMany<Count>>,
    /// Master/worker: `blocking`, `shared-pool` or `timer`.
    #[serde(default)]
    pub worker: Option<OneOrMany<WorkerKind>>,
    /// Master/worker: shared dispatcher threads.
    #[serde(default)]
    pub shared_pool: Option<OneOrMany<Count>>,
    /// Seed of shuffles and draws (default 1).
    #[serde(default)]
    pub seed: Option<u64>,
}
