//! The [`ShardRecord`] a shard's document carries: its place in the plan and
//! every histogram behind a percentile it reports (service time, send lag,
//! each series interval), so that a merge adds histograms instead of
//! averaging percentiles; and the plan's identity in it ([`plan_hash`]).

use base64::Engine;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use iolab_model::attack::AttackPlan;
use iolab_model::shard::ShardRecord;
use sha2::{Digest, Sha256};

use crate::recorder::Interval;

/// What the thread merge hands over for the record.
pub(crate) struct Measured<'a> {
    pub service: &'a Histogram<u64>,
    pub lag: &'a Histogram<u64>,
    pub intervals: &'a [Interval],
    /// The earliest send, `(intended, sent)` on the run clock.
    pub first_send: Option<(u64, u64)>,
    /// The run clock's zero (the plan's start).
    pub start_ns: u64,
}

/// The histogram as V2 + deflate, base64: what lets results merge exactly later.
pub fn encode(latency: &Histogram<u64>) -> Option<String> {
    let mut encoded = Vec::new();
    V2DeflateSerializer::new()
        .serialize(latency, &mut encoded)
        .ok()
        .map(|_| base64::engine::general_purpose::STANDARD.encode(&encoded))
}

/// The record of a sharded plan (`None` when the plan is not sharded).
pub(crate) fn record(plan: &AttackPlan, m: &Measured<'_>) -> Option<ShardRecord> {
    let shard = plan.shard?;
    let plan_ms = |ns: u64| ns.saturating_sub(m.start_ns) as f64 / 1e6;
    Some(ShardRecord {
        index: shard.index,
        count: shard.count,
        plan_hash: plan_hash(plan),
        interval_s: plan.interval.as_secs_f64(),
        plan_requests: super::plan_requests(plan),
        start_at_unix_ms: plan.start_at_unix_ms,
        first_send_ms: m.first_send.map(|(_, sent)| plan_ms(sent)),
        first_due_ms: m.first_send.map(|(due, _)| plan_ms(due)),
        service_histogram: encode(m.service),
        lag_histogram: encode(m.lag),
        interval_histograms: m
            .intervals
            .iter()
            .map(|iv| encode(&iv.latency).unwrap_or_default())
            .collect(),
    })
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use iolab_model::driver::Driver;
    use iolab_model::shard::Shard;

    use super::*;

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
        local.engine = iolab_model::attack::Engine::Epoll;
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
