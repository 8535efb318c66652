//! What a live page shows of a running command (`--live` on `attack`, `run`,
//! `capacity` and `merge`) at one moment: the attack under way as its
//! document stands (an ordinary [`AttackResult`], so the report's renderers
//! draw it), the target's telemetry so far, the experiment's finished runs
//! (an ordinary [`RunsFile`]) and what is still to come. `iolab-live` fills
//! it in; `iolab-report` renders it; nothing here measures.

use serde::{Deserialize, Serialize};

use crate::attack::AttackResult;
use crate::predict::Prediction;
use crate::runs::RunsFile;
use crate::telemetry::TelemetryPoint;

/// The schema tag of [`LiveState`].
pub const LIVE_STATE_SCHEMA: &str = "iolab.live/1";

/// What a live page serves at `/state`: the attack under way as its
/// document stands, which a merged view of shards adds up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LiveState {
    /// Always [`LIVE_STATE_SCHEMA`].
    pub schema: String,
    /// The attack is over: `attack` is its final document.
    pub finished: bool,
    /// Requests sent and not answered yet (0 once finished).
    pub in_flight: u64,
    /// Width of one series interval, s.
    pub interval_s: f64,
    /// The `iolab.attack/1` document as it stands.
    pub attack: AttackResult,
}

/// One moment of a live page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveView {
    /// What is being watched, e.g. `iolab attack http://...` or a preset's name.
    pub title: String,
    /// Where the page is served, `http://ADDR/`.
    pub address: String,
    /// Served on a loopback address only; `false` when another address was
    /// asked for by name (the page says so).
    pub loopback: bool,
    /// What the command is doing now, in a word or two.
    pub stage: String,
    /// Seconds since the command started.
    pub elapsed_s: f64,
    /// Seconds the command still expects to take, when it can tell.
    pub eta_s: Option<f64>,
    /// The attack under way (or the last one).
    pub current: Option<LiveRun>,
    /// An experiment's runs finished so far (`iolab run`).
    pub experiment: Option<RunsFile>,
    /// An experiment's runs still to come, each with its prediction.
    pub pending: Vec<PendingRun>,
    /// Attacks finished before the current one (a capacity search's steps).
    pub history: Vec<LiveRun>,
    /// The shards a merged view reads (`iolab merge --live`).
    pub sources: Vec<LiveSource>,
    /// Frames the generator or the page's readers dropped because a buffer
    /// was full (the generator never waits for a reader).
    pub dropped_frames: u64,
    /// The command has finished: this is the last picture.
    pub finished: bool,
}

/// One attack as it stands.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveRun {
    /// The run's (or step's) name.
    pub name: String,
    /// Its document so far (final once the attack is over).
    pub attack: AttackResult,
    /// Width of one series interval, s.
    pub interval_s: f64,
    /// Requests the generator sent and has no answer for yet, now.
    pub in_flight: Option<u64>,
    /// The target's telemetry so far, on the attack's clock.
    pub telemetry: Vec<TelemetryPoint>,
}

/// A run not measured yet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PendingRun {
    /// Its name.
    pub name: String,
    /// What `iolab predict` expects of it.
    pub prediction: Option<Prediction>,
}

/// A shard a merged view reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveSource {
    /// Its live page, `http://HOST:PORT/`.
    pub url: String,
    /// `shard 2/4`, or why it could not be read.
    pub status: String,
    /// It was read this time.
    pub ok: bool,
}
