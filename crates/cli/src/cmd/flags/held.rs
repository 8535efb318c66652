//! The flags of a held-connection attack (`ws://`, `wss://`, `--sse`, or a
//! gRPC streaming call: `grpc://` with `--call` and `--hold`): how long to
//! hold each connection, how fast to open them, what each WebSocket
//! message carries and how often. Read into a [`HeldPlan`] by
//! [`HeldFlags::plan`]; the library checks the ranges afterwards.

use std::path::Path;
use std::time::Duration;

use iolab_model::attack::{
    HeldKind, HeldPlan, DEFAULT_MESSAGE, DEFAULT_MESSAGE_RATE, DEFAULT_OPEN_RATE,
};
use iolab_model::protocol::GrpcCall;

use crate::CliError;

/// Largest `--message @FILE`.
const MAX_MESSAGE_FILE: u64 = 1 << 20;

/// Flags of held connections.
#[derive(Debug, Default, clap::Args)]
pub struct HeldFlags {
    /// Hold connections to an event stream (text/event-stream) at an
    /// http(s):// URL, counting its events by id (e.g. /events of `iolab serve`).
    #[arg(long)]
    pub sse: bool,
    /// ws://, --sse or a gRPC streaming --call: hold each connection (each
    /// call) this long once established (10s, 1m).
    #[arg(long, value_name = "D")]
    pub hold: Option<String>,
    /// ws:// or --sse: open connections at this rate, on schedule [default: 100/s].
    #[arg(long, value_name = "R", value_parser = super::rate)]
    pub open_rate: Option<f64>,
    /// ws://: messages per connection per second (2, 2/s, 30/1m; 0 holds
    /// silently) [default: 1/s]; each echo timed from its intended send.
    /// A bidirectional gRPC call: its --data message again at this rate
    /// after the first [default: 0, the first only].
    #[arg(long, value_name = "R", value_parser = message_rate)]
    pub message_rate: Option<f64>,
    /// ws://: the text of every message (after its sequence number), or
    /// @FILE to read it from FILE [default: hello].
    #[arg(long, value_name = "TEXT|@FILE")]
    pub message: Option<String>,
}

impl HeldFlags {
    /// Whether the run holds connections: a `ws://`/`wss://` URL, `--sse`,
    /// or `--hold` on a `grpc://`/`grpcs://` URL (a streaming call).
    pub fn wanted(&self, url: Option<&str>) -> bool {
        self.sse
            || url.is_some_and(|u| u.starts_with("ws://") || u.starts_with("wss://"))
            || (self.hold.is_some() && url.is_some_and(is_grpc))
    }

    /// Name a held flag given to a request run, so it is not silently ignored.
    pub fn stray(&self) -> Option<&'static str> {
        [
            (self.hold.is_some(), "--hold"),
            (self.open_rate.is_some(), "--open-rate"),
            (self.message_rate.is_some(), "--message-rate"),
            (self.message.is_some(), "--message"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }

    /// The plan: `connections` to hold (`--connections`), `timeout` for
    /// handshakes and echoes, `insecure` for wss://, https:// and
    /// grpcs://; a gRPC `call` started at `rate` (`--rate`).
    pub fn plan(
        &self,
        url: &str,
        connections: Option<u32>,
        timeout: Duration,
        insecure: bool,
        call: Option<(GrpcCall, Option<f64>)>,
    ) -> Result<HeldPlan, CliError> {
        let kind = match (self.sse, &call) {
            (true, _) => HeldKind::Sse,
            (false, Some(_)) => HeldKind::Grpc,
            (false, None) => HeldKind::Ws,
        };
        let hold = self.hold.as_deref().ok_or_else(|| {
            CliError::usage(
                "a held connection needs --hold D: how long to hold each (e.g. --hold 10s)",
            )
        })?;
        let hold = iolab_model::parse_duration(hold)
            .map_err(|e| CliError::usage(format!("--hold: {e}")))?;
        let connections = connections.ok_or_else(|| {
            CliError::usage("a held connection run needs --connections N: how many to hold (e.g. --connections 100)")
        })?;
        if kind == HeldKind::Sse && self.message.is_some() {
            return Err(CliError::usage(
                "--message: an event stream only receives; drop it with --sse",
            ));
        }
        let message_rate = match kind {
            HeldKind::Sse | HeldKind::Grpc => self.message_rate.unwrap_or(0.0),
            HeldKind::Ws => self.message_rate.unwrap_or(DEFAULT_MESSAGE_RATE),
        };
        let (grpc, call_rate) = call.unzip();
        Ok(HeldPlan {
            target: url.to_string(),
            kind,
            connections,
            open_rate: (call_rate.flatten())
                .or(self.open_rate)
                .unwrap_or(DEFAULT_OPEN_RATE),
            hold,
            message_rate,
            message: message(self.message.as_deref())?,
            timeout,
            insecure,
            grpc,
            metadata: Vec::new(),
            source_addrs: Vec::new(),
            shard: None,
        })
    }
}

/// A `grpc://` or `grpcs://` URL.
pub fn is_grpc(url: &str) -> bool {
    let scheme = url.split("://").next().unwrap_or_default();
    ["grpc", "grpcs"]
        .iter()
        .any(|s| scheme.eq_ignore_ascii_case(s))
}

/// `--message-rate`: a rate as `--rate` takes it, or 0 (`0`, `0/s`): hold
/// the connections without a message.
fn message_rate(s: &str) -> Result<f64, iolab_model::RateError> {
    let count = s.split('/').next().unwrap_or(s).trim();
    if count.parse::<f64>().is_ok_and(|n| n == 0.0) {
        return Ok(0.0);
    }
    super::rate(s)
}

/// `--message`: the text, or `@FILE`'s (UTF-8, at most 1 MiB).
fn message(arg: Option<&str>) -> Result<String, CliError> {
    let Some(arg) = arg else {
        return Ok(DEFAULT_MESSAGE.into());
    };
    let Some(path) = arg.strip_prefix('@') else {
        return Ok(arg.to_string());
    };
    iolab_files::read_text(Path::new(path), MAX_MESSAGE_FILE).map_err(|e| {
        CliError::usage(format!(
            "--message @{path}: {e} (give text, or @FILE of UTF-8 text up to 1 MiB)"
        ))
    })
}
