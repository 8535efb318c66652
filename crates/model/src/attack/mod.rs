//! One load-generator run: what to send ([`AttackPlan`]) and what happened
//! ([`AttackResult`], the `iolab.attack/1` document pinned by
//! `schema/attack.schema.json`).
//!
//! Accounting invariants, checked by [`AttackResult::check_accounting`]:
//! `planned = sent + not_sent` (open loop), `sent = ok + non_2xx + sum(errors)`
//! and `retried <= sent`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::protocol::ProtocolSummary;
use crate::shard::{MergeRecord, ShardRecord};

/// The schema tag of [`AttackResult`].
pub const ATTACK_SCHEMA: &str = "iolab.attack/1";

mod accounting;
mod figures;
pub use accounting::AccountingError;
pub use figures::FigureError;
mod endpoint;
mod held;
mod plan;

pub use endpoint::EndpointResult;
pub use held::{
    ConnectionCounts, HeldAccountingError, HeldKind, HeldPlan, MessageCounts, DEFAULT_MESSAGE,
    DEFAULT_MESSAGE_RATE, DEFAULT_OPEN_RATE,
};
pub use plan::{AttackPlan, SPIN_WINDOW};

/// Request counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequestCounts {
    /// Scheduled by the driver (open loop) or requested (closed loop).
    pub planned: u64,
    /// Actually put on the wire (or attempted to connect).
    pub sent: u64,
    /// Scheduled but never sent: no connection could be had in time.
    pub not_sent: u64,
    /// Answered 2xx within the timeout.
    pub ok: u64,
    /// Answered with any other status within the timeout.
    pub non_2xx: u64,
    /// Of `sent`: requests sent again, once, on a new connection, because
    /// the kept-alive connection they went out on closed before any byte of
    /// their answer (the server's idle close; docs/reliability.md). Each is
    /// still one request in `sent` and its outcome one answer or class.
    /// Written only when some were, so older documents read the same.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retried: u64,
    /// Of `ok + non_2xx`: close-delimited bodies over TLS ended without
    /// `close_notify`, taken as whole (a cut looks the same;
    /// docs/reliability.md). Written only when some were.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unclean_tls_close: u64,
}

impl RequestCounts {
    /// Answered within the timeout, 2xx or not: what a server did serve.
    pub fn answered(&self) -> u64 {
        self.ok.saturating_add(self.non_2xx)
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

pub use crate::error_class::{ErrorClass, ErrorCounts};

/// Latency from the intended send time to the end of the answer, over answered
/// requests (any status); milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencySummary {
    /// Fastest.
    pub min: f64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Slowest.
    pub max: f64,
}

/// Service time (actual send to answer, the coordinated-omission view), ms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServiceSummary {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Slowest.
    pub max: f64,
}

/// Rates over the run, requests per second, each over [`window_s`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Throughput {
    /// Planned requests / window.
    pub offered: f64,
    /// Answered requests (any status) / window.
    pub achieved: f64,
    /// 2xx within the timeout / window.
    pub goodput: f64,
}

impl Throughput {
    /// The rates of a run's counts: the one definition `run`, `predict`
    /// (its simulation's window is the same) and the report share.
    pub fn of(
        driver: &DriverSummary,
        q: &RequestCounts,
        elapsed_s: f64,
        interrupted: bool,
    ) -> Self {
        let w = window_s(driver, elapsed_s, interrupted);
        // An open loop plans its whole schedule even when cut short (the
        // rest `not_sent`): it offered that over the schedule's duration.
        let schedule = window_s(driver, elapsed_s, false);
        Throughput {
            offered: per_second(q.planned, schedule),
            achieved: per_second(q.ok.saturating_add(q.non_2xx), w),
            goodput: per_second(q.ok, w),
        }
    }
}

/// The window every rate of a run is over: an open loop's planned
/// duration, so its requests count over the time they were offered (a run
/// that serves all of them has goodput = offered, the answers landing
/// after the last send included, as a prediction counts them); a closed
/// loop's, or a run cut short's, elapsed time.
pub fn window_s(driver: &DriverSummary, elapsed_s: f64, interrupted: bool) -> f64 {
    match (driver.kind.as_str(), driver.duration_s) {
        ("open", Some(d)) if d > 0.0 && !interrupted => d,
        _ => elapsed_s,
    }
}

/// `n` per second of a `window` (0 for an empty window).
pub fn per_second(n: u64, window_s: f64) -> f64 {
    if window_s > 0.0 {
        n as f64 / window_s
    } else {
        0.0
    }
}

/// One interval of the run; `t_s` is the interval's start from the run's start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeriesPoint {
    /// Interval start, seconds since the run started.
    pub t_s: f64,
    /// Requests sent in the interval.
    pub sent: u64,
    /// 2xx answers completed in the interval.
    pub ok: u64,
    /// Errors (all classes and non-2xx) completed in the interval.
    pub errors: u64,
    /// Median latency of answers completed in the interval.
    pub p50_ms: f64,
    /// 99th percentile latency of answers completed in the interval.
    pub p99_ms: f64,
}

pub use crate::engine::Engine;
pub use crate::generator::{GeneratorStats, GeneratorVerdict};

/// Driver settings as run, flattened for readers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DriverSummary {
    /// `open` or `closed`.
    pub kind: String,
    /// Peak rate of an open loop.
    pub rate: Option<f64>,
    /// Planned (open) or bounding (closed) duration.
    pub duration_s: Option<f64>,
    /// Per-request timeout.
    pub timeout_s: f64,
    /// `constant` or `poisson` (open loop).
    #[serde(default)]
    pub arrival: Option<String>,
    /// Clients (closed loop).
    #[serde(default)]
    pub concurrency: Option<u32>,
    /// `keep-alive` or `new-connection`.
    pub connections: String,
    /// Connection cap.
    pub max_connections: u32,
}

/// A live snapshot of a running attack, for progress lines (the load
/// generator makes it, `iolab-report` renders it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    /// Time since the run started.
    pub elapsed: Duration,
    /// Requests sent so far.
    pub sent: u64,
    /// 2xx answers so far.
    pub ok: u64,
    /// Errors and non-2xx answers so far.
    pub errors: u64,
    /// Answers per second since the previous snapshot.
    pub rps: f64,
    /// 99th percentile latency of the last completed interval (worst thread), ms.
    pub p99_ms: f64,
}

/// A point of the latency percentile spectrum (HdrHistogram style).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SpectrumPoint {
    /// Percentile, 0..=100.
    pub percentile: f64,
    /// Latency at that percentile, ms.
    pub latency_ms: f64,
}

/// The `iolab.attack/1` document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AttackResult {
    /// Always [`ATTACK_SCHEMA`].
    pub schema: String,
    /// The URL attacked.
    pub target: String,
    /// How load was driven.
    pub driver: DriverSummary,
    /// Request accounting.
    pub requests: RequestCounts,
    /// Failures by class.
    pub errors: ErrorCounts,
    /// Every HTTP status seen, by code.
    pub status_codes: BTreeMap<String, u64>,
    /// Latency from the intended send time.
    pub latency_ms: LatencySummary,
    /// Latency from the actual send time.
    pub service_ms: ServiceSummary,
    /// Offered, achieved and good rates.
    pub throughput_rps: Throughput,
    /// One point per interval.
    pub series: Vec<SeriesPoint>,
    /// Generator self-check.
    pub generator: GeneratorStats,
    /// Wall time from the first scheduled send to the last answer or timeout.
    #[serde(default)]
    pub elapsed_s: f64,
    /// Start of the run, Unix milliseconds (aligns series with telemetry).
    #[serde(default)]
    pub started_unix_ms: u64,
    /// Latency percentile spectrum, for charts.
    #[serde(default)]
    pub spectrum: Vec<SpectrumPoint>,
    /// Base64 of the serialized HdrHistogram (V2 + deflate, microseconds) of
    /// latency, so results from several runs or hosts merge exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
    /// The run was stopped early (Ctrl-C): the counts cover what was planned
    /// up to then, and requests scheduled later are `not_sent`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// HTTP/2 and gRPC: the protocol spoken, streams asked for and what the
    /// server allowed (absent for HTTP/1.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<ProtocolSummary>,
    /// Present on one shard of a plan (`--shard`): what a merge needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
    /// Present on a merge of shards (`iolab merge`): where they came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergeRecord>,
    /// The objective judged on this run (`iolab attack --slo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<crate::capacity::slo::SloVerdict>,
    /// A replayed mix (`--replay`): what each endpoint got.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<EndpointResult>,
    /// Held connections (WebSocket, SSE): how each connection attempt
    /// ended. Absent on request runs. The `requests` section of such a run
    /// counts the handshakes (`ok`: upgraded, or 200 `text/event-stream`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<ConnectionCounts>,
    /// Held connections: the messages sent and echoed, or events pushed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<MessageCounts>,
}

impl AttackResult {
    /// The verdict on this run's generator: its lateness against the median
    /// latency it measured (a closed loop is judged on its CPU alone).
    pub fn generator_verdict(&self) -> GeneratorVerdict {
        let closed = self.driver.kind == "closed";
        // A held run's figures are its messages' latencies (its requests
        // are the handshakes): the generator's lag is judged against those.
        let p50 = (self.messages.as_ref())
            .and_then(|m| m.latency_ms.as_ref())
            .map_or(self.latency_ms.p50, |l| l.p50);
        self.generator.verdict(self.elapsed_s, p50, closed)
    }

    /// Its rates recomputed from its counts by [`Throughput::of`], so a
    /// document written before that one definition (goodput over the time
    /// to the last answer) reads as a new one does; kept as written when it
    /// has no window to count over.
    pub fn refresh_rates(&mut self) {
        if window_s(&self.driver, self.elapsed_s, self.interrupted) > 0.0 {
            self.throughput_rps = Throughput::of(
                &self.driver,
                &self.requests,
                self.elapsed_s,
                self.interrupted,
            );
        }
    }

    /// Success ratio: 2xx within the timeout / planned (0 when nothing was planned).
    pub fn success_ratio(&self) -> f64 {
        if self.requests.planned == 0 {
            0.0
        } else {
            self.requests.ok as f64 / self.requests.planned as f64
        }
    }

    /// Check the accounting invariants; the error names the one that broke.
    pub fn check_accounting(&self) -> Result<(), AccountingError> {
        let r = &self.requests;
        if r.planned != r.sent.saturating_add(r.not_sent) {
            return Err(AccountingError::Planned {
                planned: r.planned,
                sent: r.sent,
                not_sent: r.not_sent,
            });
        }
        let answered =
            r.ok.saturating_add(r.non_2xx)
                .saturating_add(self.errors.total());
        if r.sent != answered {
            return Err(AccountingError::Sent {
                sent: r.sent,
                ok: r.ok,
                non_2xx: r.non_2xx,
                errors: self.errors.total(),
            });
        }
        if r.retried > r.sent {
            return Err(AccountingError::Retried {
                retried: r.retried,
                sent: r.sent,
            });
        }
        if r.unclean_tls_close > answered {
            return Err(AccountingError::Unclean {
                unclean: r.unclean_tls_close,
                answered,
            });
        }
        self.errors.check_codes()?;
        if let Some(c) = &self.connections {
            c.check()?;
        }
        if let Some(m) = &self.messages {
            m.check()?;
        }
        let by_status = (self.status_codes.values()).fold(0u64, |s, n| s.saturating_add(*n));
        let answers = r.answered();
        if by_status != answers {
            return Err(AccountingError::Status { by_status, answers });
        }
        Ok(())
    }
}
