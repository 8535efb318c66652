//! The machine a run happened on, recorded with every result.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Facts that decide results: cores, the kernel limits that matter, versions, pinning.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Environment {
    /// Logical CPUs available.
    pub cores: u32,
    /// CPU model name.
    pub cpu_model: String,
    /// Kernel release.
    pub kernel: String,
    /// Open files per process (soft, hard).
    pub nofile: (u64, u64),
    /// Ephemeral port range.
    pub port_range: (u32, u32),
    /// `net.ipv4.tcp_tw_reuse`.
    pub tcp_tw_reuse: Option<u32>,
    /// `kernel.threads-max`.
    pub threads_max: Option<u64>,
    /// `kernel.pid_max`.
    pub pid_max: Option<u64>,
    /// `net.core.somaxconn`.
    #[serde(default)]
    pub somaxconn: Option<u64>,
    /// Total memory, MiB.
    pub memory_mb: u64,
    /// Tool versions (iolab, rustc, java, ...).
    pub versions: BTreeMap<String, String>,
    /// Git commit of the iolab source, if known.
    pub git_commit: Option<String>,
    /// Which CPUs the target and generator were pinned to.
    #[serde(default)]
    pub pinning: BTreeMap<String, Vec<usize>>,
    /// The command line that produced these results.
    #[serde(default)]
    pub command: String,
    /// Real backends the experiment used (`pg`, `mc`, `http` steps): the ones
    /// `iolab run` started for it, and the ones given by `IOLAB_*`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<ServiceInfo>,
}

/// One real backend an experiment used.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServiceInfo {
    /// `pg`, `mc` or `http` (the step kind it serves).
    pub kind: String,
    /// Where it listened: the URL or `HOST:PORT` targets were given.
    pub address: String,
    /// `started` (by `iolab run`, stopped at its end) or `environment`
    /// (given by `IOLAB_PG` / `IOLAB_MC` / `IOLAB_HTTP_BACKEND`).
    pub origin: String,
    /// Server version, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Anything else worth keeping (e.g. memcached keys filled, and their size).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}
