//! The load generator watching itself, and the verdict on it: a run is
//! flagged only when the generator's lateness could change the figures it
//! reports by more than a stated share, and the flag names its cause (the
//! generator's own CPU, or other processes on its CPUs), so that 1.8 ms of
//! send lag on a 100 ms measurement does not condemn a run and lag caused
//! by a neighbour is not blamed on the generator.

use serde::{Deserialize, Serialize};

/// Send lag (p99) that matters: above this share of the median latency
/// measured, the lag could move the reported figures.
pub const LAG_SHARE: f64 = 0.05;
/// ... and never below this, whatever the latency (timer resolution).
pub const LAG_FLOOR_MS: f64 = 0.5;
/// Send lag (p99) past this share of the median latency is the generator's
/// doing more than the target's: the run is called saturated, not late.
pub const LAG_HEAVY: f64 = 0.25;
/// The generator's threads busy for more than this share of the run: its
/// own CPU is the limit (the time spent spinning on purpose left out).
pub const CPU_BUSY: f64 = 0.9;
/// Other processes held the generator's CPU for more than this share of
/// its threads' time.
pub const WAIT_SHARE: f64 = 0.05;

/// The generator watching itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GeneratorStats {
    /// CPU seconds (user + system) the generator used.
    pub cpu_s: f64,
    /// 99th percentile of how late sends left versus their schedule.
    pub lag_p99_ms: f64,
    /// Worst send lag.
    pub lag_max_ms: f64,
    /// The verdict: the generator's lateness could change this run's figures.
    pub saturated: bool,
    /// Event-loop threads used.
    #[serde(default)]
    pub threads: usize,
    /// CPU seconds spent busy-waiting for sends (`spin`): counted in
    /// `cpu_s`, left out of the saturation check.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub spin_s: f64,
    /// CPUs the generator was pinned to (empty = not pinned).
    #[serde(default)]
    pub cpus: Vec<usize>,
    /// Seconds the generator's threads were ready to run but waited for a
    /// CPU another process held (`/proc/thread-self/schedstat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_s: Option<f64>,
    /// Why it was flagged, in a phrase (`None` when it was not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The engine that ran (`epoll`, `io_uring`, or `io_uring+epoll` when
    /// `auto` fell back on some threads; empty in documents written before
    /// engines existed).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub engine: String,
    /// Peak resident memory of the generator process, KiB (`VmHWM`);
    /// held-connection runs, where memory per connection is the question.
    /// On a merge of shards, the sum over the shards' processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_kib: Option<u64>,
}

/// The verdict on a generator.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorVerdict {
    /// The lag could change the reported figures.
    pub flagged: bool,
    /// Flagged, and heavily: its own CPU was the limit, or the send lag is
    /// more than [`LAG_HEAVY`] of the median latency. A lighter flag says
    /// the latencies include some lateness, not that the figures are the
    /// generator's.
    pub saturated: bool,
    /// Send lag p99 as a share of the median latency measured.
    pub lag_share: f64,
    /// Share of the threads' time the generator computed.
    pub busy_share: f64,
    /// Share of the threads' time other processes held its CPU (if known).
    pub wait_share: Option<f64>,
    /// What caused it, in a phrase, when flagged.
    pub cause: Option<String>,
}

impl GeneratorStats {
    /// Judge this generator for a run of `elapsed_s` whose answers had a
    /// median latency of `p50_ms`; `closed_loop` runs have no schedule to be
    /// late for, so only a busy CPU (which slows the clients) flags them.
    pub fn verdict(&self, elapsed_s: f64, p50_ms: f64, closed_loop: bool) -> GeneratorVerdict {
        let thread_s = elapsed_s.max(1e-9) * self.threads.max(1) as f64;
        let busy_share = ((self.cpu_s - self.spin_s) / thread_s).max(0.0);
        let wait_share = self.wait_s.map(|w| w / thread_s);
        let lag_share = self.lag_p99_ms / p50_ms.max(1e-3);
        let late = !closed_loop && self.lag_p99_ms > LAG_FLOOR_MS && lag_share > LAG_SHARE;
        // A busy share of a run too short to use a tenth of a second says nothing.
        let busy = busy_share > CPU_BUSY && self.cpu_s >= 0.1;
        let flagged = late || (closed_loop && busy);
        let saturated = flagged && (busy || lag_share > LAG_HEAVY);
        let cause = flagged.then(|| match wait_share {
            Some(w) if w > WAIT_SHARE => format!(
                "other processes held the generator's CPU for {:.2} s ({:.0}% of its time)",
                self.wait_s.unwrap_or(0.0),
                100.0 * w
            ),
            _ if busy => {
                format!("the generator used {:.0}% of its CPU", 100.0 * busy_share)
            }
            _ => format!(
                "sends left up to {:.2} ms late (p99) with the generator's CPU {:.0}% busy",
                self.lag_p99_ms,
                100.0 * busy_share
            ),
        });
        GeneratorVerdict {
            flagged,
            saturated,
            lag_share,
            busy_share,
            wait_share,
            cause,
        }
    }
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(lag: f64, cpu: f64, wait: Option<f64>) -> GeneratorStats {
        GeneratorStats {
            cpu_s: cpu,
            lag_p99_ms: lag,
            lag_max_ms: lag,
            threads: 1,
            wait_s: wait,
            ..Default::default()
        }
    }

    #[test]
    fn lag_is_judged_against_the_latency_measured() {
        // 1.8 ms of lag on a 100 ms measurement: under 2%, not flagged.
        assert!(!g(1.8, 0.1, Some(0.0)).verdict(2.0, 100.0, false).flagged);
        // 12 ms on 100 ms is.
        let v = g(12.0, 0.1, Some(0.0)).verdict(2.0, 100.0, false);
        assert!(v.flagged && v.cause.unwrap().contains("late"));
        // A closed loop has no schedule; a busy CPU flags it.
        assert!(!g(50.0, 0.1, None).verdict(2.0, 100.0, true).flagged);
        let v = g(0.0, 1.96, None).verdict(2.0, 100.0, true);
        assert!(
            !g(0.0, 0.0015, None).verdict(0.001, 1.0, true).flagged,
            "too short to say"
        );
        assert!(v.flagged && v.cause.unwrap().contains("98% of its CPU"));
    }

    /// Issue 35: a 5% lag at 40 req/s was called saturated. The words scale
    /// with the weight: light lag is late, heavy lag or a busy CPU saturated.
    #[test]
    fn r35_saturated_only_when_the_lag_weighs() {
        // 6 ms of lag on a 100 ms median (6%): flagged, not saturated.
        let v = g(6.0, 0.1, Some(0.0)).verdict(2.0, 100.0, false);
        assert!(v.flagged && !v.saturated, "{v:?}");
        // 30 ms on 100 ms (30%): saturated.
        let v = g(30.0, 0.1, Some(0.0)).verdict(2.0, 100.0, false);
        assert!(v.flagged && v.saturated, "{v:?}");
        // A busy CPU is saturation whatever the lag.
        let v = g(0.0, 1.96, None).verdict(2.0, 100.0, true);
        assert!(v.saturated, "{v:?}");
        assert!(!g(1.0, 0.1, None).verdict(2.0, 100.0, false).saturated);
    }

    #[test]
    fn the_cause_names_a_neighbour_when_it_took_the_cpu() {
        let v = g(20.0, 0.2, Some(0.4)).verdict(2.0, 100.0, false);
        assert!(v.flagged);
        assert!(v
            .cause
            .unwrap()
            .starts_with("other processes held the generator's CPU for 0.40 s"));
    }
}
