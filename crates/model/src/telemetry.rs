//! The outside view of a target process, sampled while load runs: what
//! `/proc` and the kernel say (they cannot be starved by a drowning target)
//! and what the target's own `/metrics` says (which it may fail to answer:
//! such a sample is recorded as missing, never as zero).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One sample of the target, every 100 ms or so.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TelemetryPoint {
    /// Seconds since the attack started (same clock as the attack series;
    /// negative during warm-up).
    pub t_s: f64,
    /// OS threads of the target's processes.
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
    /// Processes of the target (the one started and every one below it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
    /// The kernel: connections waiting in the listen socket's accept queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept_queue: Option<u64>,
    /// The kernel: connections established on the target's port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u64>,
    /// A foreign service's own Prometheus endpoint: each named series
    /// (Tomcat's busy threads, HikariCP's active connections), summed over
    /// its label sets; empty when not scraped or not answered.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub service: BTreeMap<String, f64>,
}

impl TelemetryPoint {
    /// Did the target's metrics endpoint answer in this sample (iolab's
    /// own series, or a foreign service's named ones)?
    pub fn metrics_answered(&self) -> bool {
        self.in_flight.is_some() || !self.service.is_empty()
    }
}

/// Telemetry of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Telemetry {
    /// Target PID sampled.
    #[serde(default)]
    pub pid: Option<u32>,
    /// Samples in time order.
    pub series: Vec<TelemetryPoint>,
    /// Samples each source could not give, by source (`metrics`, `kernel`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub lost: BTreeMap<String, u64>,
    /// Where `/metrics` was read: `separate` (a listener of its own, which a
    /// busy pool cannot starve) or `shared` (the port the load goes to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_source: Option<String>,
    /// Seconds from starting the target to its first 200 on `/health` (a
    /// runtime's launcher warms itself up first: its manifest's `warmup`
    /// requests are inside this time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_s: Option<f64>,
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

    /// Samples taken during the measured run (`t_s` from 0).
    pub fn measured(&self) -> impl Iterator<Item = &TelemetryPoint> {
        self.series.iter().filter(|p| p.t_s >= 0.0)
    }

    /// Share of the measured samples in which the target answered its
    /// `/metrics` (`None` when nothing was sampled).
    pub fn metrics_answered(&self) -> Option<f64> {
        if !self.metrics_asked() {
            return None;
        }
        let n = self.measured().count();
        let got = self.measured().filter(|p| p.metrics_answered()).count();
        (n > 0).then(|| got as f64 / n as f64)
    }

    /// Whether `/metrics` was read at all: a source is recorded, or some
    /// sample has an answer (documents written before sources were). A
    /// foreign target with no `metrics` configured is never asked.
    pub fn metrics_asked(&self) -> bool {
        self.metrics_source.is_some() || self.series.iter().any(|p| p.metrics_answered())
    }

    /// From when (seconds into the run) the target stopped answering its
    /// `/metrics` for good, if it did while it was sampled.
    pub fn metrics_silent_from(&self) -> Option<f64> {
        let measured: Vec<&TelemetryPoint> = self.measured().collect();
        let last_answer = measured.iter().rposition(|p| p.metrics_answered());
        match last_answer {
            Some(i) if i + 1 < measured.len() => Some(measured[i + 1].t_s),
            Some(_) => None,
            None => measured.first().map(|p| p.t_s),
        }
    }

    /// Cores the target kept busy on average while it was measured (CPU
    /// seconds over wall seconds between the first and last measured sample).
    pub fn busy_cores(&self) -> Option<f64> {
        let first = self.measured().next()?;
        let last = self.measured().last()?;
        let span = last.t_s - first.t_s;
        (span > 0.2).then(|| (last.cpu_s - first.cpu_s).max(0.0) / span)
    }

    /// Highest accept-queue length the kernel showed.
    pub fn peak_accept_queue(&self) -> Option<u64> {
        self.measured().filter_map(|p| p.accept_queue).max()
    }

    /// Most connections established on the target's port at once.
    pub fn peak_connections(&self) -> Option<u64> {
        self.measured().filter_map(|p| p.connections).max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampled(metrics_source: Option<&str>, in_flight: Option<f64>) -> Telemetry {
        Telemetry {
            series: (0..31)
                .map(|i| TelemetryPoint {
                    t_s: i as f64 * 0.1,
                    in_flight,
                    ..Default::default()
                })
                .collect(),
            metrics_source: metrics_source.map(str::to_string),
            ..Default::default()
        }
    }

    /// Issue 35: a foreign target with no `metrics` configured was told it
    /// "never answered its /metrics (31 of 31 samples missing)"; nothing
    /// asked it. Unasked is `None`; asked and silent is still 0.
    #[test]
    fn r35_a_target_never_asked_for_metrics_has_no_share_missing() {
        assert_eq!(sampled(None, None).metrics_answered(), None);
        assert_eq!(sampled(Some("shared"), None).metrics_answered(), Some(0.0));
        assert_eq!(sampled(None, Some(3.0)).metrics_answered(), Some(1.0));
    }
}
