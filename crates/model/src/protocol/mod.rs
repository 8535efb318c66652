//! The generator's protocol axis: HTTP/1.1, or HTTP/2 (h2 over TLS by
//! ALPN, h2c with prior knowledge on `http://`) with streams per connection
//! as a concurrency knob of its own, and gRPC unary calls over HTTP/2
//! (`grpc://`, `grpcs://`). Part of a [`RequestSet`](crate::request::RequestSet):
//! how its requests go on the wire. Which protocols there are, and which
//! engine carries each, is one table: [`PROTOCOLS`].

mod table;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use table::{
    engine_help, markdown, url_help, ProtocolDef, ProtocolKind, Shape, Transports, PROTOCOLS,
};

/// Most streams one connection may be asked to carry (`--streams`): far
/// past any server's `SETTINGS_MAX_CONCURRENT_STREAMS` default (100-250).
pub const MAX_STREAMS: u32 = 10_000;

/// Which HTTP the requests go over.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum HttpVersion {
    /// HTTP/1.1: one request at a time per connection (keep-alive).
    #[default]
    Http1,
    /// HTTP/2: `streams` requests at a time per connection.
    Http2,
}

impl HttpVersion {
    /// The name in results and text (`http/1.1`, `h2`).
    pub fn as_str(self) -> &'static str {
        match self {
            HttpVersion::Http1 => "http/1.1",
            HttpVersion::Http2 => "h2",
        }
    }
}

/// A protocol setting that cannot be used; one line naming the flag.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// `--call` not of the form `package.Service/Method`.
    #[error("--call '{0}': give package.Service/Method (e.g. helloworld.Greeter/SayHello)")]
    CallForm(String),
    /// `--streams` out of its range.
    #[error("--streams {0}: give 1 to {MAX_STREAMS} requests in flight per connection")]
    Streams(u32),
    /// `--streams` above 1 over HTTP/1.1.
    #[error("--streams {0} needs HTTP/2: add --http2 (HTTP/1.1 carries one request at a time per connection)")]
    StreamsNeedHttp2(u32),
}

/// A gRPC unary call: the method, the request message as JSON, and where
/// its types come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GrpcCall {
    /// `package.Service/Method`.
    pub method: String,
    /// The request message as protobuf JSON (`{}`: every field at its default).
    pub data: String,
    /// `.proto` files that define the method (imports resolved beside
    /// each); empty: ask the server's reflection service.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protos: Vec<PathBuf>,
}

impl GrpcCall {
    /// `(service, method)` of `package.Service/Method` (a leading `/`
    /// allowed); the error is one line naming the form.
    pub fn split(&self) -> Result<(&str, &str), ProtocolError> {
        let m = self.method.trim_start_matches('/');
        match m.split_once('/') {
            Some((service, method))
                if !service.is_empty() && !method.is_empty() && !method.contains('/') =>
            {
                Ok((service, method))
            }
            _ => Err(ProtocolError::CallForm(self.method.clone())),
        }
    }

    /// The request path: `/package.Service/Method`.
    pub fn path(&self) -> Result<String, ProtocolError> {
        let (service, method) = self.split()?;
        Ok(format!("/{service}/{method}"))
    }
}

/// How the requests of an attack go on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Protocol {
    /// HTTP/1.1 or HTTP/2.
    #[serde(default)]
    pub http: HttpVersion,
    /// HTTP/2: requests in flight on each connection (`--streams`): a
    /// closed loop's clients and an open loop's connection cap count
    /// connections, so connections x streams requests are in flight at
    /// most. A server allowing fewer (`SETTINGS_MAX_CONCURRENT_STREAMS`)
    /// makes the rest wait on the generator, their wait counted in their
    /// latency.
    #[serde(default = "one")]
    pub streams: u32,
    /// A gRPC call instead of `request.list` (HTTP/2 always).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<GrpcCall>,
}

fn one() -> u32 {
    1
}

impl Default for Protocol {
    fn default() -> Self {
        Protocol {
            http: HttpVersion::Http1,
            streams: 1,
            grpc: None,
        }
    }
}

impl Protocol {
    /// Plain HTTP/1.1 (what every plan was before this axis).
    pub fn is_default(&self) -> bool {
        *self == Protocol::default()
    }

    /// Its row of the protocol table.
    pub fn kind(&self) -> ProtocolKind {
        match (&self.grpc, self.http) {
            (Some(_), _) => ProtocolKind::GrpcUnary,
            (None, HttpVersion::Http2) => ProtocolKind::Http2,
            (None, HttpVersion::Http1) => ProtocolKind::Http1,
        }
    }

    /// Requests go over HTTP/2 (asked for, or gRPC).
    pub fn is_http2(&self) -> bool {
        self.http == HttpVersion::Http2 || self.grpc.is_some()
    }

    /// Requests one connection carries at once (1 over HTTP/1.1).
    pub fn streams_per_connection(&self) -> u32 {
        if self.is_http2() {
            self.streams.max(1)
        } else {
            1
        }
    }

    /// Check what needs no socket; the error is one line naming the flag.
    pub fn check(&self) -> Result<(), ProtocolError> {
        if self.streams == 0 || self.streams > MAX_STREAMS {
            return Err(ProtocolError::Streams(self.streams));
        }
        if self.streams > 1 && !self.is_http2() {
            return Err(ProtocolError::StreamsNeedHttp2(self.streams));
        }
        if let Some(call) = &self.grpc {
            call.split()?;
        }
        Ok(())
    }
}

/// What a run says about its protocol beside its counts: the HTTP spoken,
/// the streams asked for and what the server allowed. Absent for HTTP/1.1.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProtocolSummary {
    /// `h2` (over TLS, by ALPN) or `h2c` (prior knowledge).
    pub version: String,
    /// Streams per connection asked for (`--streams`).
    pub streams: u32,
    /// HTTP/2 connections opened during the run (a GOAWAY or a broken
    /// connection makes the next request open a new one).
    pub connections_opened: u64,
    /// The lowest `SETTINGS_MAX_CONCURRENT_STREAMS` any server connection
    /// announced (`None`: none announced, no limit). Below `streams`, the
    /// rest of a connection's requests waited on the generator for a free
    /// stream, and their latency counts that wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_max_streams: Option<u32>,
    /// gRPC: the method called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc_method: Option<String>,
}

impl ProtocolSummary {
    /// Add another thread's or shard's summary (of the same plan).
    pub fn add(&mut self, other: &ProtocolSummary) {
        self.connections_opened = self
            .connections_opened
            .saturating_add(other.connections_opened);
        self.server_max_streams = match (self.server_max_streams, other.server_max_streams) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// The server allowed fewer streams than asked: how many of each
    /// connection's requests waited for a free one.
    pub fn streams_waiting(&self) -> Option<u32> {
        self.server_max_streams
            .filter(|&max| max < self.streams)
            .map(|max| self.streams - max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_need_http2_and_calls_their_form() {
        let mut p = Protocol::default();
        assert!(p.check().is_ok() && p.is_default());
        p.streams = 8;
        assert!(p.check().unwrap_err().to_string().contains("--http2"));
        p.http = HttpVersion::Http2;
        p.check().unwrap();
        assert_eq!(p.streams_per_connection(), 8);
        p.streams = 0;
        assert!(p.check().is_err());
        p.streams = 1;
        for bad in ["Greeter", "/x/", "a/b/c", ""] {
            p.grpc = Some(GrpcCall {
                method: bad.into(),
                data: "{}".into(),
                protos: vec![],
            });
            let e = p.check().unwrap_err().to_string();
            assert!(
                e.contains("package.Service/Method") && !e.contains('\n'),
                "{e}"
            );
        }
        let call = GrpcCall {
            method: "helloworld.Greeter/SayHello".into(),
            data: "{}".into(),
            protos: vec![],
        };
        assert_eq!(call.path().unwrap(), "/helloworld.Greeter/SayHello");
    }

    #[test]
    fn summaries_add_and_keep_the_lowest_limit() {
        let mut a = ProtocolSummary {
            version: "h2c".into(),
            streams: 8,
            connections_opened: 2,
            server_max_streams: None,
            grpc_method: None,
        };
        let b = ProtocolSummary {
            connections_opened: 3,
            server_max_streams: Some(2),
            ..a.clone()
        };
        a.add(&b);
        assert_eq!((a.connections_opened, a.server_max_streams), (5, Some(2)));
        assert_eq!(a.streams_waiting(), Some(6));
    }
}
