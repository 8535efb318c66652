//! HTTP/2 in the generator, on the epoll engine (tokio): the `h2` crate
//! does framing, HPACK, flow control and stream limits; here are only the
//! requests built once ([`head`]), connections shared by `--streams`
//! workers ([`conn`]), one request's exchange ([`exchange`]), what a
//! failure counts as ([`classify`]), and the check before the run that the
//! server speaks HTTP/2 at all ([`preflight`]).
//!
//! Why not the io_uring engine: `h2` drives a connection through tokio's
//! `AsyncRead`/`AsyncWrite`, which the ring (plain bytes, its own buffers)
//! does not offer; `scripts/bench-h2` measures this engine against h2load
//! per generator CPU-second (docs/attack.md).

pub mod answer;
pub mod classify;
pub mod conn;
pub mod exchange;
pub mod head;
pub mod watch;

use std::net::SocketAddr;
use std::time::Duration;

use iolab_model::attack::AttackPlan;
use iolab_model::request::RequestTemplate;

use crate::endpoint::Endpoint;
use crate::recorder::ErrorClass;
use crate::tls::{Stream, Tls};

pub use head::HeadError;

/// Why the server cannot be sent HTTP/2 (the check before the run), or a
/// request made before the run (gRPC reflection) failed.
#[derive(Debug, thiserror::Error)]
pub enum H2Error {
    /// No event loop for the check.
    #[error("cannot build an event loop: {0}")]
    EventLoop(std::io::Error),
    /// Over TLS, the server chose something else by ALPN.
    #[error("{host} did not agree to HTTP/2 by ALPN (it chose {chose}): {fix}")]
    Alpn {
        /// The host.
        host: String,
        /// What it chose (`none` when nothing).
        chose: String,
        /// The way out ([`fix`]).
        fix: &'static str,
    },
    /// The server's SETTINGS break HTTP/2.
    #[error("{host} speaks HTTP/2 but sent {fault}: fix the server's HTTP/2 settings{}", if *grpc { "" } else { ", or drop --http2 to measure it over HTTP/1.1" })]
    Settings {
        /// The host.
        host: String,
        /// What it sent.
        fault: watch::SettingsFault,
        /// A gRPC target (HTTP/2 only: no HTTP/1.1 way out).
        grpc: bool,
    },
    /// With prior knowledge, no HTTP/2 frame came back.
    #[error("{host} does not speak HTTP/2 with prior knowledge (h2c): it did not answer HTTP/2's preface; {fix}, or use {} for h2 by ALPN", if *grpc { "grpcs://" } else { "https://" })]
    NoH2c {
        /// The host.
        host: String,
        /// The way out ([`fix`]).
        fix: &'static str,
        /// A gRPC target.
        grpc: bool,
    },
    /// HTTP/2 began, then broke off.
    #[error("{host} broke off HTTP/2 at its start ({why}): {fix}")]
    BrokeOff {
        /// The host.
        host: String,
        /// What h2 said.
        why: h2::Error,
        /// The way out ([`fix`]).
        fix: &'static str,
    },
    /// [`call`]: no connection.
    #[error("cannot open an HTTP/2 connection to {addr} ({})", class.label())]
    Open {
        /// The server.
        addr: SocketAddr,
        /// How opening failed.
        class: ErrorClass,
    },
    /// [`call`]: the request broke.
    #[error("HTTP/2 request to {addr} failed: {why}")]
    Request {
        /// The server.
        addr: SocketAddr,
        /// What h2 said.
        why: h2::Error,
    },
    /// [`call`]: an answer past [`MAX_CALL_BODY`].
    #[error("the answer of {addr} to {path} is over {} MiB: is it a gRPC server?", MAX_CALL_BODY >> 20)]
    TooBig {
        /// The server.
        addr: SocketAddr,
        /// The request's path.
        path: String,
    },
}

/// What an HTTP/2 run sends: its requests as HTTP/2 heads (sent in turn,
/// as over HTTP/1.1) and how many one connection carries at once.
pub struct Requests {
    pub heads: Vec<head::Head>,
    /// `--streams`: requests in flight per connection.
    pub streams: u32,
    /// gRPC: the method called (`package.Service/Method`), for the result.
    pub grpc_method: Option<String>,
}

impl Requests {
    /// The plan's requests (its target's GET when it lists none).
    pub fn of(plan: &AttackPlan) -> Result<Requests, HeadError> {
        let heads = match plan.request.list.is_empty() {
            true => vec![head::Head::of(&RequestTemplate::get(plan.target.as_str()))?],
            false => plan
                .request
                .list
                .iter()
                .map(head::Head::of)
                .collect::<Result<_, _>>()?,
        };
        Ok(Requests {
            heads,
            streams: plan.request.protocol.streams_per_connection(),
            grpc_method: None,
        })
    }
}

/// How long the check before the run waits for each of its steps.
const PREFLIGHT_WAIT: Duration = Duration::from_secs(5);

/// Check, before the run, that the server at `addr` speaks HTTP/2: h2 by
/// ALPN over TLS, or an answer to HTTP/2's preface and a PING with prior
/// knowledge (h2c). The error is one line naming the fault and the fix.
/// A server that cannot be reached, or answers slowly, is left to the run,
/// which counts that as data.
pub fn preflight(addr: SocketAddr, tls: Option<&Tls>, target: &Endpoint) -> Result<(), H2Error> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(H2Error::EventLoop)?;
    rt.block_on(speaks_http2(addr, tls, target))
}

/// The way out of a refusal: drop --http2, except for gRPC, which is
/// HTTP/2 only.
fn fix(target: &Endpoint) -> &'static str {
    match target.grpc {
        true => "check the port: gRPC speaks HTTP/2",
        false => "drop --http2 to measure it over HTTP/1.1",
    }
}

/// The whole answer to one request made on a connection of its own.
#[derive(Debug, Clone)]
pub struct CallAnswer {
    /// HTTP status.
    pub status: u16,
    /// The body, whole.
    pub body: Vec<u8>,
    /// `grpc-status`, from the trailers or a trailers-only head.
    pub grpc_status: Option<u32>,
}

/// Over TLS, the one-line refusal when the server chose by ALPN anything
/// but h2.
fn alpn_refusal(stream: &Stream, host: &str, fix: &'static str) -> Option<H2Error> {
    let Stream::Tls(s) = stream else {
        return None;
    };
    let alpn = s.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
    if alpn.as_deref() == Some(b"h2") {
        return None;
    }
    let chose = alpn.map_or("none".into(), |p| String::from_utf8_lossy(&p).into_owned());
    Some(H2Error::Alpn {
        host: host.to_string(),
        chose,
        fix,
    })
}

/// [`preflight`]'s exchange: ALPN over TLS, then HTTP/2's preface and a
/// PING, done once the server's SETTINGS are in (a server that never
/// answers PING is left to the run, issue 49 finding 1).
async fn speaks_http2(
    addr: SocketAddr,
    tls: Option<&Tls>,
    target: &Endpoint,
) -> Result<(), H2Error> {
    let (host, fix) = (&target.host, fix(target));
    let Ok(Ok(stream)) =
        tokio::time::timeout(PREFLIGHT_WAIT, crate::http::open_stream_io(addr, None, tls)).await
    else {
        return Ok(());
    };
    if let Some(refused) = alpn_refusal(&stream, host, fix) {
        return Err(refused);
    }
    let (stream, seen) = watch::Watched::new(stream);
    let Ok((_send, mut conn)) = h2::client::handshake(stream).await else {
        return Ok(());
    };
    let Some(mut pings) = conn.ping_pong() else {
        return Ok(());
    };
    let driver = tokio::spawn(conn);
    let answered = tokio::time::timeout(PREFLIGHT_WAIT, async {
        tokio::select! {
            pong = pings.ping(h2::Ping::opaque()) => pong.err(),
            () = settings_in(&seen) => None,
        }
    })
    .await;
    driver.abort();
    if let Some(fault) = seen.fault() {
        return Err(H2Error::Settings {
            host: host.clone(),
            fault: fault.clone(),
            grpc: target.grpc,
        });
    }
    match answered {
        Ok(None) | Err(_) => Ok(()),
        Ok(Some(e)) => Err(broke_off(&seen, e, tls.is_none(), target)),
    }
}

/// Ends once a SETTINGS frame of the server's has been read.
async fn settings_in(seen: &watch::Seen) {
    while !seen.settings_arrived() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Why the check before the run failed: with prior knowledge, a server
/// that sent no HTTP/2 frame (an HTTP/1.1 answer, garbage, a close) does
/// not speak h2c; one that did broke HTTP/2 off after its start.
fn broke_off(seen: &watch::Seen, why: h2::Error, prior: bool, target: &Endpoint) -> H2Error {
    let (host, fix) = (target.host.clone(), fix(target));
    match prior && !seen.settings_arrived() {
        true => H2Error::NoH2c {
            host,
            fix,
            grpc: target.grpc,
        },
        false => H2Error::BrokeOff { host, why, fix },
    }
}

/// Most bytes of an answer [`call`] keeps (a reflection answer, before a
/// run): four of gRPC's largest messages.
pub const MAX_CALL_BODY: usize = 4 * answer::MAX_GRPC_MESSAGE as usize;

/// Make one request on a new HTTP/2 connection and read all of its answer
/// (before a run: gRPC reflection). The error is one line.
pub async fn call(
    addr: SocketAddr,
    tls: Option<&Tls>,
    head: &head::Head,
) -> Result<CallAnswer, H2Error> {
    let broke = |why: h2::Error| H2Error::Request { addr, why };
    let (send, conn, _) = conn::open(addr, None, tls)
        .await
        .map_err(|class| H2Error::Open { addr, class })?;
    let driver = tokio::spawn(conn);
    let mut send = send.ready().await.map_err(broke)?;
    let (answer, mut body) = send
        .send_request(head.request(), head.body.is_empty())
        .map_err(broke)?;
    if !head.body.is_empty() {
        body.send_data(head.body.clone(), true).map_err(broke)?;
    }
    let answer = answer.await.map_err(broke)?;
    let (parts, mut stream) = answer.into_parts();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.data().await {
        let chunk = chunk.map_err(broke)?;
        let _ = stream.flow_control().release_capacity(chunk.len());
        if bytes.len() + chunk.len() > MAX_CALL_BODY {
            return Err(H2Error::TooBig {
                addr,
                path: head.path().to_string(),
            });
        }
        bytes.extend_from_slice(&chunk);
    }
    let trailers = stream.trailers().await.map_err(broke)?;
    drop(send);
    driver.abort();
    let grpc = |h: &http::HeaderMap| {
        h.get("grpc-status")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
    };
    Ok(CallAnswer {
        status: parts.status.as_u16(),
        body: bytes,
        grpc_status: trailers
            .as_ref()
            .and_then(grpc)
            .or_else(|| grpc(&parts.headers)),
    })
}
