//! Held connections (WebSocket, Server-Sent Events, gRPC streaming calls): what to hold
//! ([`HeldPlan`]) and what happened to the connections and their messages
//! ([`ConnectionCounts`], [`MessageCounts`]: the optional `connections` and
//! `messages` sections of `iolab.attack/1`, absent on every request run so
//! older documents read the same).
//!
//! Identities, checked by [`ConnectionCounts::check`] and
//! [`MessageCounts::check`] and kept by [`ConnectionCounts::merge`] (counts
//! add, so shards merge exactly):
//! - `attempted = established + sum(failed)`;
//! - `established = held + sum(closed_by_server) + sum(broken) + open_at_end`;
//! - `sent = answered + lost + in_flight_at_end`, `late <= answered`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::attack::LatencySummary;
use crate::units::secs;

/// Connections opened per second when none is given (`--open-rate`, a preset's `[held] open_rate`).
pub const DEFAULT_OPEN_RATE: f64 = 100.0;
/// WebSocket messages per connection per second when none is given.
pub const DEFAULT_MESSAGE_RATE: f64 = 1.0;
/// The text of every WebSocket message when none is given.
pub const DEFAULT_MESSAGE: &str = "hello";

/// Which held protocol a run speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HeldKind {
    /// WebSocket (RFC 6455), `ws://` or `wss://`: messages sent and echoed.
    Ws,
    /// Server-Sent Events (`text/event-stream`): events pushed by the server.
    Sse,
    /// A gRPC server-streaming or bidirectional call (`grpc://`, `grpcs://`
    /// with `--call`): each call is one held stream on its own HTTP/2
    /// connection.
    Grpc,
}

impl HeldKind {
    /// Its name, as `runtime.toml`'s `held` list and the JSON spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            HeldKind::Ws => "ws",
            HeldKind::Sse => "sse",
            HeldKind::Grpc => "grpc",
        }
    }

    /// The contract's route that serves it (gRPC calls name a method of
    /// the service's own, not a route of the contract).
    pub fn route(self) -> &'static str {
        match self {
            HeldKind::Ws => "GET /ws",
            HeldKind::Sse => "GET /events",
            HeldKind::Grpc => "a gRPC streaming method (--call)",
        }
    }

    /// Its row of the protocol table.
    pub fn protocol(self) -> crate::protocol::ProtocolKind {
        use crate::protocol::ProtocolKind;
        match self {
            HeldKind::Ws => ProtocolKind::WebSocket,
            HeldKind::Sse => ProtocolKind::Sse,
            HeldKind::Grpc => ProtocolKind::GrpcStream,
        }
    }
}

/// What a held-connection run is told to do; built from `iolab attack`'s
/// flags (`--connections`, `--open-rate` (`--rate` for gRPC calls),
/// `--hold`, `--message-rate`, `--message`, `--sse`, `--call`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HeldPlan {
    /// `ws://`, `wss://`, `http://` or `https://` URL.
    pub target: String,
    /// WebSocket or SSE.
    pub kind: HeldKind,
    /// Connections to open and hold.
    pub connections: u32,
    /// Connections opened per second (open loop: on schedule, whatever the
    /// earlier ones are doing).
    pub open_rate: f64,
    /// How long each connection is held once established.
    #[serde(rename = "hold_s", with = "secs")]
    #[schemars(with = "f64")]
    pub hold: Duration,
    /// WebSocket: messages per connection per second (0: hold silently).
    pub message_rate: f64,
    /// WebSocket: the text each message carries (after its sequence number).
    pub message: String,
    /// Handshake and echo timeout, from the intended time: an echo later
    /// than this is `late`; a handshake later than this failed.
    #[serde(rename = "timeout_s", with = "secs")]
    #[schemars(with = "f64")]
    pub timeout: Duration,
    /// `wss://`/`https://`/`grpcs://`: accept any certificate.
    #[serde(default)]
    pub insecure: bool,
    /// gRPC: the streaming method, its request message (`--data`, sent
    /// once for server-streaming, every `1 / message_rate` for
    /// bidirectional) and where its types come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<crate::protocol::GrpcCall>,
    /// gRPC: metadata (`-H 'Name: value'`) sent with every call, and with
    /// the reflection calls before the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metadata: Vec<(String, String)>,
    /// Connect from these addresses in turn (`--source-addrs`): each has
    /// its own ephemeral ports, so past ~14,000 connections to one server
    /// the kernel's port search does not stall the generator's loop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_addrs: Vec<std::net::IpAddr>,
    /// This process's part of the plan (`--shard i/n`): connection `k` of
    /// the plan (opened at `k / open_rate`) is shard `k mod n`'s, so the
    /// shards together open the plan's connections on its one schedule.
    /// Past one process's file limit, shards hold the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::Shard>,
}

/// The `connections` section: every connection attempted, and how each ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConnectionCounts {
    /// How long each connection was to be held once established (`--hold`), ms.
    #[serde(default)]
    pub hold_ms: u64,
    /// Connections the schedule opened (a TCP connect started).
    pub attempted: u64,
    /// Handshakes completed (101 for WebSocket, 200 `text/event-stream` for
    /// SSE, the response head of a gRPC call).
    pub established: u64,
    /// Attempts that never became a connection, by class: `status_<code>`
    /// (the server answered the upgrade with another status), `connect`,
    /// `tls`, `handshake_timeout`, `handshake` (a malformed answer),
    /// `not_event_stream`, `grpc_status:<NAME>` (a gRPC call refused at
    /// once: a trailers-only answer with that status), `reset` (a gRPC
    /// call's stream reset, or its connection gone, before the head).
    pub failed: BTreeMap<String, u64>,
    /// Held for the whole `--hold` and closed by the generator.
    pub held: u64,
    /// Closed by the server with a close frame, by close code (`none`: a
    /// close frame without a code); a gRPC call the server ended, by its
    /// `grpc-status` (`grpc_status:OK`, `grpc_status:UNAVAILABLE`).
    pub closed_by_server: BTreeMap<String, u64>,
    /// Ended by the server without a proper close: `reset`, `eof`,
    /// `no_pong`, `oversize`, `malformed`, `truncated`, `stalled`,
    /// `bad_close_code`; gRPC: `reset` (RST_STREAM), `goaway`, `no_status`
    /// (the stream ended without a `grpc-status`).
    pub broken: BTreeMap<String, u64>,
    /// Still open when the run was stopped (Ctrl-C) before their hold ended.
    pub open_at_end: u64,
}

/// The `messages` section: WebSocket messages (or a bidirectional gRPC
/// call's) sent and echoed, or SSE events (or a server-streaming call's
/// messages) pushed, each with its sequence number where it has one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MessageCounts {
    /// `echo` (latency from each message's intended send time) or `push`
    /// (from the send timestamp the server put in each event, or in a
    /// gRPC message's `sent_unix_us`; one host's clock, so the target must
    /// run on the generator's host).
    pub latency_from: String,
    /// WebSocket or a bidirectional gRPC call: messages per connection per
    /// second asked for (`--message-rate`); absent when the server pushes
    /// (SSE, server-streaming), setting the pace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_connection: Option<f64>,
    /// WebSocket: bytes of each message's text after its sequence number;
    /// a bidirectional gRPC call: of its encoded `--data` message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_bytes: Option<u64>,
    /// WebSocket, bidirectional gRPC: messages sent. SSE, server-streaming
    /// gRPC: messages the server's sequence numbers say it sent, from the
    /// first seen to the last on each connection (without numbers: those
    /// received).
    pub sent: u64,
    /// Echoed (WebSocket) or received (SSE).
    pub answered: u64,
    /// Never answered: a later sequence number came first, or the
    /// connection ended with them outstanding.
    pub lost: u64,
    /// Sent and unanswered when the connection was closed at the end of
    /// its hold (after a grace of one timeout).
    pub in_flight_at_end: u64,
    /// Of `answered`: later than the timeout.
    pub late: u64,
    /// Sends that were due when the connection could not take them (its
    /// socket was still writing the previous ones): sent late, timed from
    /// when they were due.
    pub behind: u64,
    /// Latency of answered messages, ms; absent when none was answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<LatencySummary>,
    /// Base64 of the latency HdrHistogram (V2 + deflate, microseconds), so
    /// runs and shards merge exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
    /// The generator's own error in each message's latency: how late each
    /// message left against its intended send time (p99, ms), which the
    /// echo latency includes (docs/attack.md, "C10K"). Absent when no
    /// message was sent (SSE, server-streaming gRPC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag_p99_ms: Option<f64>,
    /// Base64 of that send-lag HdrHistogram (V2 + deflate, microseconds),
    /// so shards merge it exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag_histogram: Option<String>,
}

fn total(m: &BTreeMap<String, u64>) -> u64 {
    m.values().fold(0u64, |s, n| s.saturating_add(*n))
}

fn add_map(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, n) in from {
        *into.entry(k.clone()).or_default() += n;
    }
}

/// Which held-connection identity a document broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeldAccountingError {
    /// `attempted != established + failed`.
    #[error("connections: attempted {attempted} != established {established} + failed {failed}")]
    Attempts {
        /// Attempted.
        attempted: u64,
        /// Established.
        established: u64,
        /// Sum of failed.
        failed: u64,
    },
    /// An established connection is missing from how they ended.
    #[error("connections: established {established} != held + closed by server + broken + open at end = {ended}")]
    Endings {
        /// Established.
        established: u64,
        /// The sum of the endings.
        ended: u64,
    },
    /// `sent != answered + lost + in_flight_at_end`, or `late > answered`.
    #[error("messages: sent {sent} != answered {answered} + lost {lost} + in flight {in_flight} (late {late})")]
    Messages {
        /// Sent.
        sent: u64,
        /// Answered.
        answered: u64,
        /// Lost.
        lost: u64,
        /// In flight at the end.
        in_flight: u64,
        /// Late.
        late: u64,
    },
}

impl ConnectionCounts {
    /// Attempts that failed, all classes.
    pub fn failed_total(&self) -> u64 {
        total(&self.failed)
    }

    /// Check both connection identities.
    pub fn check(&self) -> Result<(), HeldAccountingError> {
        let failed = self.failed_total();
        if self.attempted != self.established.saturating_add(failed) {
            return Err(HeldAccountingError::Attempts {
                attempted: self.attempted,
                established: self.established,
                failed,
            });
        }
        let ended = self
            .held
            .saturating_add(total(&self.closed_by_server))
            .saturating_add(total(&self.broken))
            .saturating_add(self.open_at_end);
        if self.established != ended {
            return Err(HeldAccountingError::Endings {
                established: self.established,
                ended,
            });
        }
        Ok(())
    }

    /// Add another run's (or shard's) counts: every count adds (the hold
    /// is the plan's, kept).
    pub fn merge(&mut self, other: &ConnectionCounts) {
        self.attempted += other.attempted;
        self.established += other.established;
        add_map(&mut self.failed, &other.failed);
        self.held += other.held;
        add_map(&mut self.closed_by_server, &other.closed_by_server);
        add_map(&mut self.broken, &other.broken);
        self.open_at_end += other.open_at_end;
    }
}

impl MessageCounts {
    /// Check `sent = answered + lost + in_flight_at_end` and `late <= answered`.
    pub fn check(&self) -> Result<(), HeldAccountingError> {
        let sum = self
            .answered
            .saturating_add(self.lost)
            .saturating_add(self.in_flight_at_end);
        if self.sent != sum || self.late > self.answered {
            return Err(HeldAccountingError::Messages {
                sent: self.sent,
                answered: self.answered,
                lost: self.lost,
                in_flight: self.in_flight_at_end,
                late: self.late,
            });
        }
        Ok(())
    }

    /// Add another run's counts. The latency summary and histogram are
    /// the caller's to recompute from the merged histograms (this crate
    /// holds no histogram code); they are cleared here so a stale one is
    /// never kept.
    pub fn merge_counts(&mut self, other: &MessageCounts) {
        self.sent += other.sent;
        self.answered += other.answered;
        self.lost += other.lost;
        self.in_flight_at_end += other.in_flight_at_end;
        self.late += other.late;
        self.behind += other.behind;
        self.latency_ms = None;
        self.histogram = None;
        self.send_lag_p99_ms = None;
        self.send_lag_histogram = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conns(
        attempted: u64,
        established: u64,
        status: u64,
        held: u64,
        code: u64,
    ) -> ConnectionCounts {
        let mut c = ConnectionCounts {
            attempted,
            established,
            held,
            ..ConnectionCounts::default()
        };
        c.failed.insert("status_200".into(), status);
        c.closed_by_server.insert("1011".into(), code);
        c
    }

    #[test]
    fn connection_identities_hold_and_merge_exactly() {
        let a = conns(10, 8, 2, 7, 1);
        let b = conns(5, 5, 0, 4, 1);
        assert_eq!(a.check(), Ok(()));
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!(m.check(), Ok(()));
        assert_eq!(
            (m.attempted, m.held, m.closed_by_server["1011"]),
            (15, 11, 2)
        );
        let broken = conns(10, 9, 2, 7, 1);
        assert!(matches!(
            broken.check(),
            Err(HeldAccountingError::Attempts { .. })
        ));
    }

    #[test]
    fn message_identity_names_what_broke() {
        let mut m = MessageCounts {
            sent: 10,
            answered: 7,
            lost: 2,
            in_flight_at_end: 1,
            late: 1,
            ..MessageCounts::default()
        };
        assert_eq!(m.check(), Ok(()));
        m.late = 8;
        assert!(m.check().unwrap_err().to_string().contains("late 8"));
    }
}
