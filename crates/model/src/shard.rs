//! Past one machine: a plan split into shards that n hosts send together,
//! and the records that let their results merge into exactly the result one
//! host would have produced.
//!
//! - [`Shard`] (`i/n`, 1-based): shard i sends the requests of the full plan
//!   whose index k has k mod n = i - 1 (k6's execution segments, cut by
//!   request rather than by share of time), so the shards' union is the
//!   single-host schedule and no two shards send the same request.
//! - [`parse_start_at`]: one absolute wall-clock start for every shard,
//!   however late its engine (Slurm, Kubernetes) started it.
//! - [`plan_hash`]: the identity of the load, so a merge refuses shards of
//!   different plans.
//! - [`ShardRecord`] (in a shard's `iolab.attack/1` document) and
//!   [`MergeRecord`] (in a merged one): counts are in the document already;
//!   these add what a merge needs beyond them (the histograms behind every
//!   percentile, and where each shard started).
//!
//! Pure data and computation; the selection itself runs in `loadgen`.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::attack::AttackPlan;

/// Most shards a plan may be cut into.
pub const MAX_SHARDS: u32 = 10_000;

/// Furthest ahead a start time may be: beyond that it is more likely
/// milliseconds given as seconds than a plan.
pub const MAX_START_LEAD: Duration = Duration::from_secs(24 * 3600);

/// Shard `index` of `count` (1 <= index <= count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = |why: &str| format!("--shard '{s}': {why} (use i/n with 1 <= i <= n, e.g. 2/4)");
        let (i, n) = s.split_once('/').ok_or_else(|| bad("missing '/'"))?;
        let index: u32 = i
            .trim()
            .parse()
            .map_err(|_| bad("i is not a whole number"))?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|_| bad("n is not a whole number"))?;
        if count == 0 || count > MAX_SHARDS {
            return Err(bad(&format!("n must be 1..={MAX_SHARDS}")));
        }
        if index == 0 || index > count {
            return Err(bad("i is out of range"));
        }
        Ok(Shard { index, count })
    }
}

/// Parse a start time into Unix milliseconds: Unix seconds (`1767225600`,
/// fractions allowed), RFC 3339 (`2026-01-01T00:00:00Z`, any offset), or
/// `+DUR` from `now` (`+10s`: convenient by hand, but each host reads its own
/// clock, so shards on several hosts should share an absolute time).
pub fn parse_start_at(s: &str, now: SystemTime) -> Result<u64, String> {
    let s = s.trim();
    let bad = |why: String| {
        format!("--start-at '{s}': {why} (use Unix seconds, RFC 3339 like 2026-11-22T10:00:00Z, or +10s)")
    };
    let at = if let Some(rel) = s.strip_prefix('+') {
        let d = crate::parse_duration(rel).map_err(|e| bad(e.to_string()))?;
        now + d
    } else if let Ok(secs) = s.parse::<f64>() {
        if !(secs.is_finite() && secs > 0.0) {
            return Err(bad("not a time after 1970".into()));
        }
        UNIX_EPOCH + Duration::from_secs_f64(secs)
    } else {
        let t = chrono::DateTime::parse_from_rfc3339(s).map_err(|e| bad(e.to_string()))?;
        let ms = u64::try_from(t.timestamp_millis()).map_err(|_| bad("before 1970".into()))?;
        UNIX_EPOCH + Duration::from_millis(ms)
    };
    let ms = at
        .duration_since(UNIX_EPOCH)
        .map_err(|_| bad("before 1970".into()))?
        .as_millis() as u64;
    if at > now + MAX_START_LEAD {
        return Err(bad(format!(
            "{} from now is more than a day ahead (milliseconds given as seconds?)",
            crate::format_duration(at.duration_since(now).unwrap_or_default())
        )));
    }
    Ok(ms)
}

/// Keys of an [`AttackPlan`] that describe one generator host, not the load:
/// left out of [`plan_hash`] so hosts with different cores share a plan.
const LOCAL_KEYS: [&str; 8] = [
    "engine",
    "source_addrs",
    "threads",
    "cpus",
    "record_requests",
    "spin",
    "shard",
    "start_at_unix_ms",
];

/// The identity of the load a plan sends: `sha256:` and the first 16 hex
/// digits of the SHA-256 of its JSON without the host-local keys (every
/// other key, including any added later, takes part). Of the target, only
/// what is asked (path and query) takes part, not where: the hosts of a
/// sharded `iolab run` each measure their own target, on ports of their
/// own; whether shards attacked one target is the merge's check.
pub fn plan_hash(plan: &AttackPlan) -> String {
    let mut v = serde_json::to_value(plan).unwrap_or_default();
    if let Some(map) = v.as_object_mut() {
        for k in LOCAL_KEYS {
            map.remove(k);
        }
        map.insert("target".into(), request_part(&plan.target).into());
    }
    // serde_json's maps are sorted by key, so this text is canonical.
    let digest = Sha256::digest(v.to_string().as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// A URL without its scheme and authority: `/path?query`.
fn request_part(url: &str) -> &str {
    match url.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => url,
    }
}

/// What a shard's document carries so that shards merge exactly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    /// 1-based index.
    pub index: u32,
    /// Shards of the plan.
    pub count: u32,
    /// [`plan_hash`] of the full plan.
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
}

/// What a merged document says about the shards it came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MergeRecord {
    /// Shards merged (all of the plan's).
    pub shards: u32,
    /// [`plan_hash`] they share.
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
    use crate::driver::Driver;

    #[test]
    fn shards_parse_and_refuse_with_the_fix() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "a/2", "3", "1/10001"] {
            let e = bad.parse::<Shard>().unwrap_err();
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

    #[test]
    fn start_times_in_three_spellings() {
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert_eq!(parse_start_at("1800000010", now), Ok(1_800_000_010_000));
        assert_eq!(parse_start_at("1800000010.25", now), Ok(1_800_000_010_250));
        assert_eq!(parse_start_at("+1.5s", now), Ok(1_800_000_001_500));
        // 2027-01-15T08:00:00Z = 1800000000, written with an offset.
        assert_eq!(
            parse_start_at("2027-01-15T09:00:05+01:00", now),
            Ok(1_800_000_005_000)
        );
        let e = parse_start_at("1800000000000", now).unwrap_err();
        assert!(e.contains("more than a day ahead"), "{e}");
        assert!(parse_start_at("tomorrow", now)
            .unwrap_err()
            .contains("RFC 3339"));
    }

    #[test]
    fn the_plan_hash_ignores_the_host_and_sees_the_load() {
        let plan = AttackPlan {
            timeout: Duration::from_secs(1),
            ..AttackPlan::new(
                "http://127.0.0.1:1/",
                Driver::constant(100.0, Duration::from_secs(1)),
            )
        };
        let h = plan_hash(&plan);
        assert!(h.starts_with("sha256:") && h.len() == 23, "{h}");
        let mut local = plan.clone();
        local.threads = Some(3);
        local.cpus = vec![1];
        local.shard = Some(Shard { index: 2, count: 4 });
        local.start_at_unix_ms = Some(5);
        local.engine = crate::attack::Engine::Epoll;
        assert_eq!(plan_hash(&local), h);
        let mut other = plan.clone();
        other.driver = Driver::constant(101.0, Duration::from_secs(1));
        assert_ne!(plan_hash(&other), h);
        let mut elsewhere = plan.clone();
        elsewhere.target = "http://10.0.0.9:8080/".into();
        assert_eq!(plan_hash(&elsewhere), h);
        elsewhere.target = "http://10.0.0.9:8080/work?steps=cpu:1".into();
        assert_ne!(plan_hash(&elsewhere), h);
    }
}
