//! What one load-generator run is told to send: the [`AttackPlan`], built
//! from flags or a preset and validated before anything is sent.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::driver::{ConnectionMode, Driver};
use crate::engine::Engine;
use crate::request::RequestSet;
use crate::shard::Shard;
use crate::units::secs;

/// Everything the load generator needs; built from CLI flags or a preset,
/// validated before anything is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AttackPlan {
    /// Full URL, e.g. `http://127.0.0.1:8080/work?steps=sleep:100`.
    pub target: String,
    /// Open or closed loop.
    pub driver: Driver,
    /// Kept-alive pool or a new connection per request, with a cap.
    pub connections: ConnectionMode,
    /// Per-request timeout, measured from the intended send time.
    #[serde(rename = "timeout_s", with = "secs")]
    #[schemars(with = "f64")]
    pub timeout: Duration,
    /// Width of one series interval.
    #[serde(rename = "interval_s", with = "secs")]
    #[schemars(with = "f64")]
    pub interval: Duration,
    /// Generator event loops (threads); `None` = one per available core.
    #[serde(default)]
    pub threads: Option<usize>,
    /// CPUs to pin the generator's threads to (empty = no pinning).
    #[serde(default)]
    pub cpus: Vec<usize>,
    /// Keep one row per request (for `--csv`); costs memory.
    #[serde(default)]
    pub record_requests: bool,
    /// Open loop: busy-wait (yielding to the connections) through the last
    /// [`SPIN_WINDOW`] before each send instead of sleeping. An idle CPU,
    /// above all a virtual one, can take milliseconds to wake from a timer;
    /// spinning keeps sends on time at the price of the generator's core.
    #[serde(default)]
    pub spin: bool,
    /// What each request sends (default: a plain GET of `target`).
    #[serde(default, skip_serializing_if = "RequestSet::is_plain_get")]
    pub request: RequestSet,
    /// Send only this shard of the plan (`--shard i/n`; `None` = all of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Start at this wall-clock time, Unix ms (`--start-at`), so shards on
    /// several hosts begin together; `None` = as soon as the threads are up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_unix_ms: Option<u64>,
    /// Which event-loop engine the generator threads run on.
    #[serde(default)]
    pub engine: Engine,
    /// Addresses new connections come from, in turn (`--source-addrs`);
    /// empty: the kernel's choice. Each has its own ephemeral port range, so
    /// one generator can hold more connections to one server than one
    /// address's range allows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_addrs: Vec<std::net::IpAddr>,
    /// Most headers one answer may carry (`--max-headers`); `None`: the
    /// generator's default (256). Past it an answer is malformed (`read`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_headers: Option<usize>,
}

impl AttackPlan {
    /// A plan with every option at its default (`iolab attack URL` with
    /// only the driver's flags): kept-alive connections, 10 s timeout, 1 s
    /// intervals, one thread per core, no pinning, the whole plan now.
    pub fn new(target: impl Into<String>, driver: Driver) -> Self {
        AttackPlan {
            target: target.into(),
            driver,
            connections: ConnectionMode::default(),
            timeout: Duration::from_secs(10),
            interval: Duration::from_secs(1),
            threads: None,
            cpus: vec![],
            record_requests: false,
            spin: false,
            request: RequestSet::default(),
            shard: None,
            start_at_unix_ms: None,
            engine: Engine::default(),
            source_addrs: Vec::new(),
            max_headers: None,
        }
    }
}

/// How close to a send [`AttackPlan::spin`] stops sleeping: more than the
/// worst wake-up delay seen on a virtual CPU (a few ms).
pub const SPIN_WINDOW: Duration = Duration::from_millis(5);
