//! Why a verify check could not get what it judges, typed: no time left
//! ([`NotRun`]), no answer ([`GetFault`]), a `/metrics` page that cannot be
//! used ([`MetricsFault`]), a backend counter that cannot be read
//! ([`CounterFault`]). A failed check keeps the message as its detail; the
//! texts are the report's, so they stay word for word.

use std::io;
use std::time::Duration;

use iolab_model::steps::BackendKind;

use crate::prometheus::ParseError;

/// The steps each `/ws` message runs in the echo check.
pub const ECHO_STEPS: &str = "sleep:50";
/// The least time an echo of [`ECHO_STEPS`] takes, ms.
pub const ECHO_MIN_MS: f64 = 50.0;
/// Messages sent in the echo check, one after the other.
pub const ECHOES: u64 = 2;
/// The `/events` interval asked for.
pub const EVERY_MS: u64 = 50;
/// Events read from `/events`.
pub const EVENTS: u64 = 3;

/// There is no time left for a check's request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotRun {
    /// Ctrl-C.
    #[error("not run: interrupted")]
    Interrupted,
    /// Past [`crate::VerifyOptions::deadline`].
    #[error("not run: verify's deadline of {} passed", iolab_model::format_duration(*.0))]
    Deadline(Duration),
}

/// A GET within the budget got no answer.
#[derive(Debug, thiserror::Error)]
pub enum GetFault {
    /// No time to send it.
    #[error(transparent)]
    NotRun(#[from] NotRun),
    /// Sent, but no answer came (connect, read or framing failed).
    #[error("no answer to GET {path}: {why}")]
    NoAnswer {
        /// The path asked for.
        path: String,
        /// Why.
        why: io::Error,
    },
}

/// `/metrics` cannot be used for counting.
#[derive(Debug, thiserror::Error)]
pub enum MetricsFault {
    /// The GET failed.
    #[error(transparent)]
    Get(#[from] GetFault),
    /// It answered, but not 200.
    #[error("GET /metrics answered {0}")]
    Status(u16),
    /// A line a scraper would refuse.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// Series the contract requires are absent.
    #[error("missing series: {}", .0.join(", "))]
    Missing(Vec<&'static str>),
    /// The series a backend check counts is absent.
    #[error("/metrics has no {0}")]
    NoSeries(String),
}

/// A backend's own counter cannot be read (or set up).
#[derive(Debug, thiserror::Error)]
pub enum CounterFault {
    /// The backend crate's reader failed.
    #[error(transparent)]
    Backend(#[from] iolab_backends::CountError),
    /// verify sends no step of its own to this kind.
    #[error("verify has no step of its own for {0}")]
    NoStep(BackendKind),
    /// verify's key could not be stored.
    #[error("cannot store '{key}' in memcached at {addr}: {why}")]
    Store {
        /// The key.
        key: String,
        /// memcached's address.
        addr: String,
        /// Why.
        why: io::Error,
    },
    /// memcached cannot be reached.
    #[error("cannot connect to memcached at {addr}: {why}")]
    Connect {
        /// memcached's address.
        addr: String,
        /// Why.
        why: io::Error,
    },
    /// The connection broke mid-command.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// memcached answered a command with something else.
    #[error("memcached answered '{line}' to '{cmd}'")]
    Answer {
        /// The command sent.
        cmd: String,
        /// Its answer line.
        line: String,
    },
    /// The dump stopped before `END`.
    #[error("memcached closed the connection during 'stats detail dump'")]
    DumpClosed,
    /// The dump went on past any real size.
    #[error("'stats detail dump' did not end")]
    DumpEndless,
}

/// What a held check was waiting for when its time ran out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Awaited {
    /// The echo of message N.
    #[error("no echo of message {0}")]
    Echo(u64),
    /// The next event, N read so far.
    #[error("{0} of {events} events", events = EVENTS)]
    Events(usize),
    /// The `/events` head.
    #[error("no answer to GET /events")]
    EventsHead,
}

/// Why a held check (`/ws`, `/events`) failed.
#[derive(Debug, thiserror::Error)]
pub enum HeldFault {
    /// No time to start it.
    #[error(transparent)]
    NotRun(#[from] NotRun),
    /// Ctrl-C while reading.
    #[error("interrupted")]
    Interrupted,
    /// The check's time ran out.
    #[error("{what} within {}", iolab_model::format_duration(*.within))]
    Late {
        /// What was not there.
        what: Awaited,
        /// The time it had.
        within: Duration,
    },
    /// The target cannot be reached.
    #[error("cannot connect: {0}")]
    Connect(io::Error),
    /// The socket's timeouts cannot be set.
    #[error("socket: {0}")]
    Socket(io::Error),
    /// The upgrade was answered with another status.
    #[error("GET {path} answered {status} to the upgrade, not 101")]
    UpgradeStatus {
        /// The path.
        path: String,
        /// Its status.
        status: u16,
    },
    /// The handshake failed otherwise.
    #[error("GET {path}: no WebSocket handshake: {why}")]
    Handshake {
        /// The path.
        path: String,
        /// tungstenite's reason.
        why: tungstenite::Error,
    },
    /// The handshake stopped half-way (a read timed out).
    #[error("GET {path}: no WebSocket handshake: Interrupted handshake (WouldBlock)")]
    HandshakeStalled {
        /// The path.
        path: String,
    },
    /// A message could not be sent.
    #[error("message {seq} not sent: {why}")]
    NotSent {
        /// 1-based.
        seq: u64,
        /// tungstenite's reason.
        why: tungstenite::Error,
    },
    /// The echo differs from the message.
    #[error("message {seq}: sent {sent:?}, echoed {echoed:?}")]
    Changed {
        /// 1-based.
        seq: u64,
        /// The text sent.
        sent: String,
        /// The echo, cut to one line.
        echoed: String,
    },
    /// The echo came faster than its steps take.
    #[error("message {seq} echoed in {ms:.1} ms, under the {min} ms of its steps {steps}: the steps did not run per message", min = ECHO_MIN_MS, steps = ECHO_STEPS)]
    EchoFast {
        /// 1-based.
        seq: u64,
        /// How long it took.
        ms: f64,
    },
    /// The echo is a binary frame.
    #[error("message {0} echoed as a binary frame, not text")]
    Binary(u64),
    /// The target closed before the echo.
    #[error("closed by the target ({}) before echoing message {seq}", code.map_or("no code".to_string(), |c| c.to_string()))]
    Closed {
        /// 1-based.
        seq: u64,
        /// The close code, if one was sent.
        code: Option<u16>,
    },
    /// Reading the echo failed.
    #[error("before the echo of message {seq}: {why}")]
    EchoRead {
        /// 1-based.
        seq: u64,
        /// tungstenite's reason.
        why: tungstenite::Error,
    },
    /// The `/events` request could not be written.
    #[error("GET /events not sent: {0}")]
    EventsNotSent(io::Error),
    /// `/events` is not an event stream.
    #[error("GET /events answered {status} {content_type:?}, not 200 text/event-stream")]
    NotStream {
        /// Its status.
        status: u16,
        /// Its Content-Type.
        content_type: String,
    },
    /// The chunked framing broke.
    #[error("GET /events: {0}")]
    Chunked(&'static str),
    /// An event larger than the parser keeps.
    #[error("an event over 1 MiB")]
    EventTooBig,
    /// The stream ended early.
    #[error("the stream ended after {0} events")]
    Ended(usize),
    /// Reading the stream failed.
    #[error("after {events} events: {why}")]
    EventsRead {
        /// Events read before.
        events: usize,
        /// The OS error.
        why: io::Error,
    },
    /// An event with the wrong id or data.
    #[error("event {want}: id {id:?}, data {data:?}; expected id: {want} and data {{\"seq\":{want},\"sent_unix_us\":<wall clock, µs>}}")]
    BadEvent {
        /// The id expected.
        want: u64,
        /// The id read.
        id: Option<u64>,
        /// Its data, cut to one line.
        data: String,
    },
    /// A stamp far from this host's clock.
    #[error("sent_unix_us {stamp} is {off_s:.1} s from this host's clock: not microseconds since the Unix epoch")]
    Clock {
        /// The stamp.
        stamp: u64,
        /// How far from now, s.
        off_s: f64,
    },
    /// Events closer than the interval asked.
    #[error("events {gap:.1} ms apart: every={every}ms not honoured (gaps {gaps})", every = EVERY_MS)]
    TooClose {
        /// The first short gap, ms.
        gap: f64,
        /// Every gap, ms, as listed.
        gaps: String,
    },
    /// The answer head does not parse.
    #[error("GET /events: bad answer head: {0}")]
    BadHead(httparse::Error),
    /// The answer head is too large.
    #[error("GET /events: an answer head over 64 KiB")]
    HeadTooBig,
    /// The target closed before answering.
    #[error("GET /events: closed before an answer")]
    HeadClosed,
    /// Reading the head failed.
    #[error("GET /events: {0}")]
    HeadRead(io::Error),
}
