//! Past one machine: a plan split into shards that n hosts send together,
//! and the records that let their results merge into exactly the result one
//! host would have produced.
//!
//! - [`Shard`] (`i/n`, 1-based): shard i sends the requests of the full plan
//!   whose index k has k mod n = i - 1 (k6's execution segments, cut by
//!   request rather than by share of time), so the shards' union is the
//!   single-host schedule and no two shards send the same request.
//! - `--start-at` (read by the cli): one absolute wall-clock start for
//!   every shard, however late its engine (Slurm, Kubernetes) started it.
//! - `plan_hash` (computed by the generator, `iolab_loadgen::shard`): the
//!   identity of the load, so a merge refuses shards of different plans.
//! - [`ShardRecord`] (in a shard's `iolab.attack/1` document) and
//!   [`MergeRecord`] (in a merged one): counts are in the document already;
//!   these add what a merge needs beyond them (the histograms behind every
//!   percentile, and where each shard started).
//!
//! Pure data and computation; the selection itself runs in `loadgen`.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Most shards a plan may be cut into.
pub const MAX_SHARDS: u32 = 10_000;

/// Furthest ahead a start time may be: beyond that it is more likely
/// milliseconds given as seconds than a plan.
pub const MAX_START_LEAD: Duration = Duration::from_secs(24 * 3600);

/// Shard `index` of `count` (1 <= index <= count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Shard {
    /// 1-based index.
    pub index: u32,
    /// How many shards the plan is cut into.
    pub count: u32,
}

impl Shard {
    /// The whole plan as one shard.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// The residue this shard takes: request k is its own when
    /// k mod count == offset.
    pub fn offset(&self) -> u64 {
        u64::from(self.index - 1)
    }

    /// This shard's part of `total` items dealt round-robin (requests of a
    /// closed loop, its clients, connections): as even as possible, the
    /// first `total mod count` shards taking one more.
    pub fn share(&self, total: u64) -> u64 {
        let n = u64::from(self.count);
        total / n + u64::from(self.offset() < total % n)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A `--shard` that is not `i/n`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--shard '{text}': {why} (use i/n with 1 <= i <= n, e.g. 2/4)")]
pub struct ShardParseError {
    /// As given.
    pub text: String,
    /// What is wrong with it.
    pub why: ShardFault,
}

/// What is wrong with a `--shard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ShardFault {
    /// No `/`.
    #[error("missing '/'")]
    NoSlash,
    /// `i` not a number.
    #[error("i is not a whole number")]
    Index,
    /// `n` not a number.
    #[error("n is not a whole number")]
    Count,
    /// `n` out of range.
    #[error("n must be 1..={MAX_SHARDS}")]
    CountRange,
    /// `i` out of range.
    #[error("i is out of range")]
    IndexRange,
}

impl FromStr for Shard {
    type Err = ShardParseError;

    fn from_str(s: &str) -> Result<Shard, ShardParseError> {
        let bad = |why| ShardParseError {
            text: s.to_string(),
            why,
        };
        let (i, n) = s.split_once('/').ok_or_else(|| bad(ShardFault::NoSlash))?;
        let index: u32 = i.trim().parse().map_err(|_| bad(ShardFault::Index))?;
        let count: u32 = n.trim().parse().map_err(|_| bad(ShardFault::Count))?;
        if count == 0 || count > MAX_SHARDS {
            return Err(bad(ShardFault::CountRange));
        }
        if index == 0 || index > count {
            return Err(bad(ShardFault::IndexRange));
        }
        Ok(Shard { index, count })
    }
}

/// What a shard's document carries so that shards merge exactly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShardRecord {
    /// 1-based index.
    pub index: u32,
    /// Shards of the plan.
    pub count: u32,
    /// The identity of the full plan (`iolab_loadgen::shard::plan_hash`).
    pub plan_hash: String,
    /// Width of one series interval, s (series merge on it).
    pub interval_s: f64,
    /// Requests the full plan schedules (open loop, or a closed loop's
    /// `--requests`); `None` for a closed loop bounded by time only.
    #[serde(default)]
    pub plan_requests: Option<u64>,
    /// The `--start-at` every shard was given, Unix ms.
    #[serde(default)]
    pub start_at_unix_ms: Option<u64>,
    /// This shard's first send on the plan clock (0 = the plan's start), ms.
    #[serde(default)]
    pub first_send_ms: Option<f64>,
    /// When that first send was due, on the same clock, ms.
    #[serde(default)]
    pub first_due_ms: Option<f64>,
    /// Service-time histogram (base64 V2 + deflate, microseconds).
    #[serde(default)]
    pub service_histogram: Option<String>,
    /// Send-lag histogram (same encoding).
    #[serde(default)]
    pub lag_histogram: Option<String>,
    /// Latency histogram of each series interval, in series order.
    #[serde(default)]
    pub interval_histograms: Vec<String>,
}

impl ShardRecord {
    /// The shard as `i/n`.
    pub fn shard(&self) -> Shard {
        Shard {
            index: self.index,
            count: self.count,
        }
    }
}

/// One shard as a merged document lists it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShardPart {
    /// 1-based index.
    pub index: u32,
    /// The shard's run start, Unix ms.
    pub started_unix_ms: u64,
    /// How late its first send left against its schedule, ms (on the
    /// merged clock: start differences included).
    #[serde(default)]
    pub first_send_late_ms: Option<f64>,
    /// Its request counts: planned, sent, ok.
    pub planned: u64,
    /// Sent.
    pub sent: u64,
    /// 2xx answers.
    pub ok: u64,
    /// Its generator's CPU seconds.
    pub cpu_s: f64,
    /// Its generator threads.
    pub threads: usize,
    /// Its generator was the bottleneck.
    pub saturated: bool,
    /// Held connections: its process's peak resident memory, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_kib: Option<u64>,
    /// Held connections: its generator's message send lag p99, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag_p99_ms: Option<f64>,
    /// Held connections: connections it established.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub established: Option<u64>,
}

/// What a merged document says about the shards it came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MergeRecord {
    /// Shards merged (all of the plan's).
    pub shards: u32,
    /// The plan identity they share (`iolab_loadgen::shard::plan_hash`).
    pub plan_hash: String,
    /// Requests the full plan schedules, when known.
    #[serde(default)]
    pub plan_requests: Option<u64>,
    /// The `--start-at` every shard was given, Unix ms (`None` when they
    /// were given none, or different ones).
    #[serde(default)]
    pub start_at_unix_ms: Option<u64>,
    /// Max - min over shards of how late each shard's first send left
    /// against its schedule, ms: how far from "together" they started.
    #[serde(default)]
    pub start_skew_ms: Option<f64>,
    /// Series of shards that did not share a start were shifted by whole
    /// intervals to line up on absolute time (nearest interval).
    #[serde(default)]
    pub series_shifted: bool,
    /// Each shard, by index.
    pub parts: Vec<ShardPart>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_with_the_fix() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "a/2", "3", "1/10001"] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains("use i/n"), "{e}");
        }
        assert_eq!(Shard::WHOLE.to_string(), "1/1");
    }

    #[test]
    fn shares_add_up_and_differ_by_at_most_one() {
        for total in [0u64, 1, 3, 4, 10, 1001] {
            let parts: Vec<u64> = (1..=4)
                .map(|index| Shard { index, count: 4 }.share(total))
                .collect();
            assert_eq!(parts.iter().sum::<u64>(), total);
            assert!(parts.iter().max().unwrap() - parts.iter().min().unwrap() <= 1);
        }
    }
}
