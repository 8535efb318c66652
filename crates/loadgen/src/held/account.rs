//! The books of a held-connection run: one [`Books`] per run, written by
//! every connection task of its event loop, turned into the
//! `iolab.attack/1` document ([`Books::into_result`]); and the exact merge
//! of two runs' documents ([`merge`]).
//!
//! Each connection ends in exactly one way ([`Ending`]), and each message
//! is counted once as answered, lost or in flight, so the identities of
//! [`ConnectionCounts`] and [`MessageCounts`] hold on every path.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use iolab_model::attack::{
    AttackResult, ConnectionCounts, ErrorClass, ErrorCounts, GeneratorStats, HeldPlan,
    MessageCounts, RequestCounts, Throughput, ATTACK_SCHEMA,
};

use crate::merge::{add, latency_summary};
use crate::recorder::new_histogram;
use crate::shard::record::encode;

/// Longest latency a histogram holds: ten minutes, in microseconds.
pub(crate) const HIGHEST_US: u64 = 600_000_000;

/// Why a connection attempt failed before it was established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The server answered the handshake with this status.
    Status(u16),
    /// The TCP connect failed (its class for the `requests` section).
    Connect(ErrorClass),
    /// The TLS handshake failed.
    Tls,
    /// No complete handshake answer within the timeout.
    Timeout,
    /// A malformed or refused handshake answer (bad accept key, no upgrade).
    Handshake,
    /// SSE: a 200 that is not `text/event-stream`.
    NotEventStream,
    /// gRPC: the call was refused at once (a trailers-only answer) with
    /// this `grpc-status`.
    GrpcStatus(u32),
    /// gRPC: the call's stream was reset (or its connection went away)
    /// before the server's head was read; its class for `requests`.
    Reset(ErrorClass),
}

/// How an established connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Held for the whole hold and closed by us.
    Held,
    /// The server sent a close frame, with this code (`None`: no code).
    ClosedByServer(Option<u16>),
    /// gRPC: the server ended the call with this `grpc-status`.
    GrpcStatus(u32),
    /// The server ended it without a proper close: `reset`, `eof`,
    /// `no_pong`, `oversize`, `malformed`, `truncated`, `stalled`,
    /// `bad_close_code`.
    Broken(&'static str),
    /// The run was stopped while it was open.
    OpenAtEnd,
}

/// What one connection's messages came to.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    /// Sent (WebSocket) or numbered by the server (SSE).
    pub sent: u64,
    /// Echoed or received.
    pub answered: u64,
    /// Skipped by a later sequence number, or outstanding when it broke.
    pub lost: u64,
    /// Outstanding when we closed it at the end of its hold.
    pub in_flight: u64,
    /// Of answered, past the timeout.
    pub late: u64,
    /// Sends made after they were due because the socket was busy.
    pub behind: u64,
}

/// The books of one run.
pub struct Books {
    conns: ConnectionCounts,
    tally: Tally,
    handshakes: RequestCounts,
    errors: ErrorCounts,
    status: BTreeMap<String, u64>,
    /// Handshake latency from each connection's intended open time, us.
    pub handshake: Histogram<u64>,
    /// Message latency (echo from intended send; push from the server's stamp), us.
    pub messages: Histogram<u64>,
    /// How late the generator was: each open and each message send after
    /// its intended time, us (the generator's own lag, as for requests).
    pub lag: Histogram<u64>,
    /// Of `lag`, the message sends only: the generator's own error in each
    /// message's latency (`messages.send_lag_p99_ms`).
    pub send_lag: Histogram<u64>,
}

impl Default for Books {
    fn default() -> Self {
        Books {
            conns: ConnectionCounts::default(),
            tally: Tally::default(),
            handshakes: RequestCounts::default(),
            errors: ErrorCounts::default(),
            status: BTreeMap::new(),
            handshake: new_histogram(HIGHEST_US),
            messages: new_histogram(HIGHEST_US),
            lag: new_histogram(HIGHEST_US),
            send_lag: new_histogram(HIGHEST_US),
        }
    }
}

fn bump(map: &mut BTreeMap<String, u64>, key: String) {
    *map.entry(key).or_default() += 1;
}

impl Books {
    /// The generator was `ns` late for an open or a send.
    pub fn late_by(&mut self, ns: u64) {
        self.lag.saturating_record(ns / 1_000);
    }

    /// A message left `ns` after its intended send time.
    pub fn message_late_by(&mut self, ns: u64) {
        self.late_by(ns);
        self.send_lag.saturating_record(ns / 1_000);
    }

    /// A connection's attempt started (its connect is under way).
    pub fn attempted(&mut self) {
        self.conns.attempted += 1;
        self.handshakes.sent += 1;
    }

    /// The handshake completed `latency_us` after the intended open time.
    pub fn established(&mut self, status: u16, latency_us: u64) {
        self.conns.established += 1;
        self.handshakes.ok += 1;
        bump(&mut self.status, status.to_string());
        self.handshake.saturating_record(latency_us.max(1));
    }

    /// The attempt failed: once in `connections.failed`, and once in the
    /// `requests` section (an answer by its status, else an error class).
    pub fn failed(&mut self, why: &Failure, latency_us: u64) {
        let key = match why {
            Failure::Status(code) => format!("status_{code}"),
            Failure::Connect(_) => "connect".into(),
            Failure::Tls => "tls".into(),
            Failure::Timeout => "handshake_timeout".into(),
            Failure::Handshake => "handshake".into(),
            Failure::NotEventStream => "not_event_stream".into(),
            Failure::GrpcStatus(code) => ErrorClass::GrpcStatus(*code).label(),
            Failure::Reset(_) => "reset".into(),
        };
        bump(&mut self.conns.failed, key);
        match why {
            Failure::Status(code) => {
                self.handshakes.non_2xx += 1;
                bump(&mut self.status, code.to_string());
                self.handshake.saturating_record(latency_us.max(1));
            }
            Failure::NotEventStream => {
                self.handshakes.non_2xx += 1;
                bump(&mut self.status, "200".into());
                self.handshake.saturating_record(latency_us.max(1));
            }
            Failure::Connect(class) | Failure::Reset(class) => self.errors.record(*class),
            Failure::GrpcStatus(code) => {
                self.errors.record(ErrorClass::GrpcStatus(*code));
                self.handshake.saturating_record(latency_us.max(1));
            }
            Failure::Timeout => self.errors.record(ErrorClass::Timeout),
            Failure::Tls | Failure::Handshake => self.errors.record(ErrorClass::Read),
        }
    }

    /// An established connection ended; `t` is what its messages came to.
    pub fn ended(&mut self, how: &Ending, t: &Tally) {
        match how {
            Ending::Held => self.conns.held += 1,
            Ending::ClosedByServer(code) => bump(
                &mut self.conns.closed_by_server,
                code.map_or("none".into(), |c| c.to_string()),
            ),
            Ending::GrpcStatus(code) => bump(
                &mut self.conns.closed_by_server,
                ErrorClass::GrpcStatus(*code).label(),
            ),
            Ending::Broken(class) => bump(&mut self.conns.broken, (*class).into()),
            Ending::OpenAtEnd => self.conns.open_at_end += 1,
        }
        let m = &mut self.tally;
        m.sent += t.sent;
        m.answered += t.answered;
        m.lost += t.lost;
        m.in_flight += t.in_flight;
        m.late += t.late;
        m.behind += t.behind;
    }

    /// The document: handshakes as `requests`, the held sections, and no
    /// figure that was not measured (no latency when nothing answered).
    pub fn into_result(self, plan: &HeldPlan, run: &RunFacts) -> AttackResult {
        let t = self.tally;
        let echo = run.echo_bytes.is_some();
        let messages = MessageCounts {
            latency_from: if echo { "echo" } else { "push" }.into(),
            rate_per_connection: echo.then_some(plan.message_rate),
            message_bytes: run.echo_bytes,
            sent: t.sent,
            answered: t.answered,
            lost: t.lost,
            in_flight_at_end: t.in_flight,
            late: t.late,
            behind: t.behind,
            latency_ms: (!self.messages.is_empty()).then(|| latency_summary(&self.messages)),
            histogram: (!self.messages.is_empty())
                .then(|| encode(&self.messages))
                .flatten(),
            send_lag_p99_ms: (!self.send_lag.is_empty()).then(|| p99_ms(&self.send_lag)),
            send_lag_histogram: (!self.send_lag.is_empty())
                .then(|| encode(&self.send_lag))
                .flatten(),
        };
        let driver = super::driver_summary(plan);
        // Connections the schedule never opened (the run was stopped first).
        let mut handshakes = self.handshakes;
        handshakes.planned = super::own_connections(plan).max(handshakes.sent);
        handshakes.not_sent = handshakes.planned - handshakes.sent;
        AttackResult {
            schema: ATTACK_SCHEMA.into(),
            target: plan.target.clone(),
            throughput_rps: Throughput::of(&driver, &handshakes, run.elapsed_s, run.cancelled),
            driver,
            requests: handshakes,
            errors: self.errors,
            status_codes: self.status,
            latency_ms: latency_summary(&self.handshake),
            generator: GeneratorStats {
                engine: "epoll".into(),
                threads: 1,
                lag_p99_ms: p99_ms(&self.lag),
                lag_max_ms: self.lag.max() as f64 / 1e3,
                ..GeneratorStats::default()
            },
            elapsed_s: run.elapsed_s,
            started_unix_ms: run.started_unix_ms,
            histogram: encode(&self.handshake),
            interrupted: run.cancelled,
            connections: Some(ConnectionCounts {
                hold_ms: plan.hold.as_millis() as u64,
                ..self.conns
            }),
            messages: Some(messages),
            ..AttackResult::default()
        }
    }
}

/// The 99th percentile of a microsecond histogram, ms.
pub(crate) fn p99_ms(h: &Histogram<u64>) -> f64 {
    h.value_at_quantile(0.99) as f64 / 1e3
}

/// When and how long a run ran.
#[derive(Debug, Clone, Copy)]
pub struct RunFacts {
    /// Seconds from the first intended open to the last close.
    pub elapsed_s: f64,
    /// Start, Unix ms.
    pub started_unix_ms: u64,
    /// Stopped early.
    pub cancelled: bool,
    /// The bytes of each message sent, when messages are sent and echoed
    /// (WebSocket, a bidirectional gRPC call); `None` when the server
    /// pushes them (SSE, a server-streaming call).
    pub echo_bytes: Option<u64>,
}

/// Why two held documents could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// One of them has no `connections`/`messages` sections.
    #[error("not a held-connection document: no connections or messages section")]
    NotHeld,
    /// A message histogram did not decode.
    #[error("messages.histogram: {0}")]
    Histogram(String),
}

/// Merge `b`'s held sections into `a`'s exactly: counts add, the message
/// histograms add, and the latency summary is recomputed from the sum.
pub fn merge(a: &mut AttackResult, b: &AttackResult) -> Result<(), MergeError> {
    let (Some(ac), Some(bc)) = (a.connections.as_mut(), b.connections.as_ref()) else {
        return Err(MergeError::NotHeld);
    };
    ac.merge(bc);
    let (Some(am), Some(bm)) = (a.messages.as_mut(), b.messages.as_ref()) else {
        return Err(MergeError::NotHeld);
    };
    let h = added(&am.histogram, &bm.histogram)?;
    // A document written before send lags were recorded has none: the
    // merge then has none either, rather than one shard's for all.
    let lag = match (&am.send_lag_histogram, &bm.send_lag_histogram) {
        (Some(_), Some(_)) => Some(added(&am.send_lag_histogram, &bm.send_lag_histogram)?),
        _ => None,
    };
    am.merge_counts(bm);
    if !h.is_empty() {
        am.latency_ms = Some(latency_summary(&h));
        am.histogram = encode(&h);
    }
    if let Some(lag) = lag.filter(|l| !l.is_empty()) {
        am.send_lag_p99_ms = Some(p99_ms(&lag));
        am.send_lag_histogram = encode(&lag);
    }
    Ok(())
}

/// Two optional base64 histograms, added.
fn added(a: &Option<String>, b: &Option<String>) -> Result<Histogram<u64>, MergeError> {
    let mut h = new_histogram(HIGHEST_US);
    for b64 in [a, b].into_iter().flatten() {
        let one = crate::shard::hist::decode_base64(b64)
            .map_err(|e| MergeError::Histogram(e.to_string()))?;
        add(&mut h, &one);
    }
    Ok(h)
}
