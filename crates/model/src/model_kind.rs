//! The concurrency models iolab compares, their knobs, and the defaults of the
//! real systems each one stands for (REFERENCE.md, "Defaults that decide these results").

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How work is scheduled onto threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelKind {
    /// One thread, one request at a time.
    Sequential,
    /// N OS threads, blocking IO, bounded connections and accept queue (Tomcat).
    Pool,
    /// A new OS thread per connection, up to a cap.
    ThreadPerRequest,
    /// Event loop whose handler blocks the loop thread (`suspend fun` + `Thread.sleep`).
    LoopBlocking,
    /// Event loop that moves blocking calls to a bounded pool (`Dispatchers.IO`).
    LoopOffload,
    /// Event loop with truly non-blocking IO (timers, async drivers).
    LoopAsync,
    /// JVM virtual threads (Loom); JVM targets only.
    Virtual,
}

impl ModelKind {
    /// Every model, in the order tables show them.
    pub const ALL: [ModelKind; 7] = [
        Self::Sequential,
        Self::Pool,
        Self::ThreadPerRequest,
        Self::LoopBlocking,
        Self::LoopOffload,
        Self::LoopAsync,
        Self::Virtual,
    ];

    /// Models built into the Rust binary.
    pub const BUILT_IN: [ModelKind; 6] = [
        Self::Sequential,
        Self::Pool,
        Self::ThreadPerRequest,
        Self::LoopBlocking,
        Self::LoopOffload,
        Self::LoopAsync,
    ];

    /// The name used on the command line, in presets and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sequential => "sequential",
            Self::Pool => "pool",
            Self::ThreadPerRequest => "thread-per-request",
            Self::LoopBlocking => "loop-blocking",
            Self::LoopOffload => "loop-offload",
            Self::LoopAsync => "loop-async",
            Self::Virtual => "virtual",
        }
    }

    /// Does a blocking IO call hold an OS thread in this model?
    pub fn blocks_threads(self) -> bool {
        !matches!(self, Self::LoopAsync | Self::Virtual)
    }
}

impl fmt::Display for ModelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown model name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown model '{0}' (expected one of: sequential, pool, thread-per-request, loop-blocking, loop-offload, loop-async, virtual)")]
pub struct UnknownModel(pub String);

impl FromStr for ModelKind {
    type Err = UnknownModel;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| UnknownModel(s.to_string()))
    }
}

/// Where a target runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    /// Built into the iolab binary.
    #[default]
    Rust,
    /// A Spring target under `targets/jvm/`.
    Jvm,
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Runtime::Rust => "rust",
            Runtime::Jvm => "jvm",
        })
    }
}

/// A model's knobs; `None` means "the default of the system it stands for".
/// Each model reads only the knobs that apply to it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelParams {
    /// `pool`: worker threads (Tomcat default 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// `pool`: connections held open at once (Tomcat maxConnections 8,192).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<u32>,
    /// `pool`, `sequential`, `thread-per-request`: listen backlog (Tomcat acceptCount 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog: Option<u32>,
    /// `loop-*`: event-loop worker threads (tokio default: cores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u32>,
    /// `loop-offload`: blocking pool size (Kotlin Dispatchers.IO: 64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offload: Option<u32>,
    /// `thread-per-request`: most threads alive at once (default: no cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_threads: Option<u32>,
    /// Every model: memcached connections (`--mc-pool`, default 1, E4's set-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mc_pool: Option<u32>,
    /// Every model: PostgreSQL pool size (`--pg-pool`, default 10, HikariCP's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pg_pool: Option<u32>,
}

/// Defaults of the systems the models stand for.
pub mod defaults {
    /// Tomcat maxThreads.
    pub const POOL_THREADS: u32 = 200;
    /// Tomcat maxConnections.
    pub const MAX_CONNECTIONS: u32 = 8_192;
    /// Tomcat acceptCount.
    pub const BACKLOG: u32 = 100;
    /// Kotlin Dispatchers.IO.
    pub const OFFLOAD: u32 = 64;
    /// HikariCP maximumPoolSize.
    pub const PG_POOL: u32 = 10;
}

impl ModelParams {
    /// `pool` threads, defaulted.
    pub fn threads(&self) -> u32 {
        self.threads.unwrap_or(defaults::POOL_THREADS)
    }

    /// Connection cap, defaulted.
    pub fn max_connections(&self) -> u32 {
        self.max_connections.unwrap_or(defaults::MAX_CONNECTIONS)
    }

    /// Listen backlog, defaulted.
    pub fn backlog(&self) -> u32 {
        self.backlog.unwrap_or(defaults::BACKLOG)
    }

    /// Event-loop workers, defaulted to the number of cores (tokio's default).
    pub fn workers(&self, cores: u32) -> u32 {
        self.workers.unwrap_or(cores.max(1))
    }

    /// Offload pool size, defaulted.
    pub fn offload(&self) -> u32 {
        self.offload.unwrap_or(defaults::OFFLOAD)
    }

    /// PostgreSQL connections, defaulted.
    pub fn pg_pool(&self) -> u32 {
        self.pg_pool.unwrap_or(defaults::PG_POOL)
    }

    /// Every knob as (name, value), in one fixed order: labels, `iolab
    /// serve` flags (`--` + the name with `-` for `_`) and checks all walk it.
    pub fn knobs(&self) -> [(&'static str, Option<u32>); 8] {
        [
            ("threads", self.threads),
            ("max_connections", self.max_connections),
            ("backlog", self.backlog),
            ("workers", self.workers),
            ("offload", self.offload),
            ("max_threads", self.max_threads),
            ("mc_pool", self.mc_pool),
            ("pg_pool", self.pg_pool),
        ]
    }

    /// A short label of the knobs that are set, e.g. `threads=200,backlog=100`.
    pub fn label(&self) -> String {
        let parts: Vec<String> = self
            .knobs()
            .into_iter()
            .filter_map(|(k, v)| Some(format!("{k}={}", v?)))
            .collect();
        parts.join(",")
    }

    /// The knobs that are set as command-line flags, e.g.
    /// `["--threads", "200", "--max-connections", "10"]`.
    pub fn flags(&self) -> Vec<String> {
        self.knobs()
            .into_iter()
            .filter_map(|(k, v)| Some([format!("--{}", k.replace('_', "-")), v?.to_string()]))
            .flatten()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in ModelKind::ALL {
            assert_eq!(m.as_str().parse::<ModelKind>().unwrap(), m);
            assert_eq!(serde_json::to_value(m).unwrap(), m.as_str());
        }
        assert!("fibers".parse::<ModelKind>().is_err());
    }

    #[test]
    fn label_lists_only_set_knobs() {
        let p = ModelParams {
            threads: Some(8),
            offload: Some(2),
            ..Default::default()
        };
        assert_eq!(p.label(), "threads=8,offload=2");
        assert_eq!(p.max_connections(), 8_192);
    }

    #[test]
    fn set_knobs_become_serve_flags() {
        let p = ModelParams {
            max_connections: Some(10),
            pg_pool: Some(4),
            ..Default::default()
        };
        assert_eq!(p.flags(), ["--max-connections", "10", "--pg-pool", "4"]);
        assert!(ModelParams::default().flags().is_empty());
    }
}
