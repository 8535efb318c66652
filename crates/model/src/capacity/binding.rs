//! The resource that binds a service at its capacity, named from every
//! signal the search had (the curve, `/proc`, the kernel, the service's own
//! Prometheus series), with the evidence, a confidence, and the signal that
//! would settle it when the signals disagree or are missing.

use serde::{Deserialize, Serialize};

/// What limits a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Resource {
    /// Request threads: each request holds one while it waits.
    Threads,
    /// Worker processes, one request at a time each (prefork).
    Workers,
    /// A named pool a request waits for (database connections, an executor).
    Pool,
    /// The CPU: requests compute most of the time they are held.
    Cpu,
    /// One request at a time: an event loop blocked by its own handlers.
    EventLoop,
    /// A downstream the service waits on, whose own capacity is reached.
    Downstream,
    /// No signal names it.
    Unknown,
}

impl Resource {
    /// Its name, as saved.
    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Threads => "threads",
            Resource::Workers => "workers",
            Resource::Pool => "pool",
            Resource::Cpu => "cpu",
            Resource::EventLoop => "event-loop",
            Resource::Downstream => "downstream",
            Resource::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How sure the naming is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// One signal, or signals that only fit it loosely.
    Low,
    /// One signal that fits it well.
    Medium,
    /// Two independent signals agree.
    High,
}

impl Confidence {
    /// Its name, as saved.
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// Where a piece of evidence comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The load: latency, rate, Little's law.
    Latency,
    /// `/proc`: threads, processes, CPU.
    Proc,
    /// The kernel's sockets: accept queue, connections.
    Kernel,
    /// The service's own Prometheus series.
    Prometheus,
}

/// One reading that speaks for (or against) the resource named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evidence {
    /// Where it was read.
    pub source: Source,
    /// What it says, with its numbers.
    pub text: String,
}

/// The binding resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Binding {
    /// What it is.
    pub resource: Resource,
    /// How many units it has (threads, workers, connections, cores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<f64>,
    /// The pool's or the downstream's name (`hikaricp`, `127.0.0.1:5432`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// How long a request holds one unit, ms.
    pub hold_ms: f64,
    /// How sure.
    pub confidence: Confidence,
    /// One sentence: what binds and why.
    pub sentence: String,
    /// The readings behind it.
    pub evidence: Vec<Evidence>,
    /// The signal that would settle it, when signals disagree or are missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<String>,
    /// `size` is as configured (a `_max` gauge), not counted by Little's
    /// law or from open connections.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub configured: bool,
    /// Other resources the evidence shows, each with the rate at which it
    /// would bind: kept in the fitted network, so a change that relieves
    /// the binding one meets them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Limit>,
    /// The runtime its series show, whose own knobs the what-ifs name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<super::gauges::ServiceRuntime>,
}

/// A resource beside the binding one, and where it would bind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Limit {
    /// What it is.
    pub resource: Resource,
    /// Its units.
    pub size: f64,
    /// Its name (`hikaricp`, `127.0.0.1:5432`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// How long a request holds one unit, ms (at most: read from a peak,
    /// or the whole wait when nothing tells it).
    pub hold_ms: f64,
    /// The rate at which it would bind, req/s: size / hold (at least).
    pub binds_at_rps: f64,
    /// `size` is as configured (a `_max` gauge), not counted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub configured: bool,
}

impl Limit {
    /// `HikariCP's 50 connections`, `the pool of 50 connections to
    /// HOST:PORT`, `its 40 threads`: as a sentence names it.
    pub fn what(&self) -> String {
        let name = self.name.as_deref().unwrap_or("");
        let size = self.size.round();
        match super::gauges::gauge(name) {
            Some(g) => format!("{}'s {size} {}", g.label, g.unit),
            None if self.resource == Resource::Pool => {
                format!("the pool of {size} connections to {name}")
            }
            None => format!("its {size} {}", self.resource),
        }
    }
}
