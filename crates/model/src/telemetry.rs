//! The outside view of a target process, sampled while load runs.

use serde::{Deserialize, Serialize};

/// One sample of the target, every 100 ms or so.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TelemetryPoint {
    /// Seconds since the attack started (same clock as the attack series;
    /// negative during warm-up).
    pub t_s: f64,
    /// OS threads of the target process.
    pub threads: u64,
    /// Resident memory, MiB.
    pub rss_mb: f64,
    /// CPU seconds used so far (user + system).
    pub cpu_s: f64,
    /// Open file descriptors.
    pub fds: u64,
    /// `/metrics`: requests in flight.
    #[serde(default)]
    pub in_flight: Option<f64>,
    /// `/metrics`: requests queued for a thread.
    #[serde(default)]
    pub queued: Option<f64>,
    /// `/metrics`: completed so far.
    #[serde(default)]
    pub completed: Option<f64>,
    /// `/metrics`: rejected so far.
    #[serde(default)]
    pub rejected: Option<f64>,
}

/// Telemetry of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Telemetry {
    /// Target PID sampled.
    #[serde(default)]
    pub pid: Option<u32>,
    /// Samples in time order.
    pub series: Vec<TelemetryPoint>,
}

impl Telemetry {
    /// Highest thread count seen.
    pub fn peak_threads(&self) -> Option<u64> {
        self.series.iter().map(|p| p.threads).max()
    }

    /// Highest RSS seen, MiB.
    pub fn peak_rss_mb(&self) -> Option<f64> {
        self.series.iter().map(|p| p.rss_mb).reduce(f64::max)
    }

    /// CPU seconds used between the first and last sample.
    pub fn cpu_s(&self) -> Option<f64> {
        Some(self.series.last()?.cpu_s - self.series.first()?.cpu_s)
    }

    /// Highest in-flight count seen on `/metrics`.
    pub fn peak_in_flight(&self) -> Option<f64> {
        self.series
            .iter()
            .filter_map(|p| p.in_flight)
            .reduce(f64::max)
    }
}
