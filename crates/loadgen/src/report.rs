//! What an attack produced ([`AttackReport`]): the result document and the
//! raw material behind `--hdr` and `--csv`. Built by the merge, written by
//! `output`.

use std::time::Duration;

use hdrhistogram::Histogram;
use iolab_model::attack::AttackResult;

use crate::recorder::RequestRow;

/// One interval of the merged latency record, for the HdrHistogram interval log.
#[derive(Debug, Clone)]
pub struct IntervalHistogram {
    /// Interval start, from the run's start.
    pub start: Duration,
    /// Interval width.
    pub duration: Duration,
    /// Latency from intended send time, microseconds.
    pub histogram: Histogram<u64>,
}

/// What an attack produced: the `iolab.attack/1` document plus the raw
/// material behind `--hdr` and `--csv`.
#[derive(Debug, Clone)]
pub struct AttackReport {
    /// The result document.
    pub result: AttackResult,
    /// The run was stopped through [`Hooks::cancel`].
    pub cancelled: bool,
    /// Merged latency histogram (microseconds from intended send time).
    pub latency: Histogram<u64>,
    /// Per-interval latency histograms, merged over threads.
    pub intervals: Vec<IntervalHistogram>,
    /// One row per request, ordered by intended send time; empty unless
    /// `plan.record_requests`.
    pub requests: Vec<RequestRow>,
}
