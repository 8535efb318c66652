//! The [`ShardRecord`] a shard's document carries: its place in the plan and
//! every histogram behind a percentile it reports (service time, send lag,
//! each series interval), so that a merge adds histograms instead of
//! averaging percentiles.

use hdrhistogram::Histogram;
use iolab_model::attack::AttackPlan;
use iolab_model::shard::{plan_hash, ShardRecord};

use crate::merge::encode;
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
