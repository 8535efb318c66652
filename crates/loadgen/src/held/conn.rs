//! Where a held connection goes ([`Target`]: the URL read once, its
//! address resolved once) and the byte stream to it (TCP, or TLS over TCP
//! with the generator's own rustls client).

use std::io;
use std::net::{IpAddr, SocketAddr};

use iolab_model::attack::{HeldKind, HeldPlan};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use super::account::Failure;
use super::HeldError;
use crate::endpoint::Endpoint;
use crate::source::Sources;
use crate::tls::Tls;

/// A byte stream to the target, plain or TLS.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// The target of a held-connection run.
pub struct Target {
    /// The URL as `http://`/`https://` (the scheme WebSocket's upgrade rides on).
    pub endpoint: Endpoint,
    /// The URL as given (`ws://...` for WebSocket's handshake request).
    pub url: String,
    /// Resolved once, before the run.
    pub addr: Option<SocketAddr>,
    tls: Option<Tls>,
    /// Where connections come from (`--source-addrs`), taken in turn.
    sources: Sources,
}

impl Target {
    /// Read the URL: `ws://`/`wss://` for WebSocket, `http://`/`https://`
    /// with `--sse`, `grpc://`/`grpcs://` for a gRPC call.
    pub fn parse(plan: &HeldPlan) -> Result<Target, HeldError> {
        let url = &plan.target;
        let bad = |why: &str| HeldError::Url {
            url: url.clone(),
            why: why.into(),
        };
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("missing ws://"))?;
        if plan.kind == HeldKind::Grpc {
            if !matches!(scheme, "grpc" | "grpcs") {
                return Err(bad(
                    "a gRPC call's URL starts grpc:// (h2c) or grpcs:// (TLS)",
                ));
            }
            let endpoint = Endpoint::parse(url).map_err(|e| bad(&e.to_string()))?;
            if endpoint.path != "/" {
                return Err(bad(
                    "a gRPC URL names host and port only; the method goes in --call",
                ));
            }
            return Ok(Target {
                endpoint,
                url: url.clone(),
                addr: None,
                tls: None,
                sources: Sources::new(plan.source_addrs.clone()),
            });
        }
        let http = match (plan.kind, scheme) {
            (HeldKind::Ws, "ws") | (HeldKind::Sse, "http") => "http",
            (HeldKind::Ws, "wss") | (HeldKind::Sse, "https") => "https",
            (HeldKind::Ws, _) => return Err(bad("a WebSocket URL starts ws:// or wss://")),
            (HeldKind::Sse | HeldKind::Grpc, _) => {
                return Err(bad("an event stream's URL starts http:// or https://"))
            }
        };
        let endpoint =
            Endpoint::parse(&format!("{http}://{rest}")).map_err(|e| bad(&e.to_string()))?;
        Ok(Target {
            endpoint,
            url: url.clone(),
            addr: None,
            tls: None,
            sources: Sources::new(plan.source_addrs.clone()),
        })
    }

    /// Resolve the address and set up TLS (`insecure`: any certificate),
    /// once, before the run.
    pub fn resolved(mut self, insecure: bool, sources: &[IpAddr]) -> Result<Target, HeldError> {
        let addr = self.endpoint.resolve()?;
        crate::source::check(sources, addr)?;
        self.addr = Some(addr);
        if self.endpoint.tls {
            // gRPC rides on HTTP/2: its TLS offers ALPN h2.
            let h2 = self.endpoint.grpc;
            let tls = Tls::new(&self.endpoint.host, insecure, h2)?;
            self.tls = Some(tls);
        }
        Ok(self)
    }

    /// The TLS client, for `wss://`, `https://` and `grpcs://`.
    pub fn tls(&self) -> Option<&Tls> {
        self.tls.as_ref()
    }

    /// `Host:` as the request carries it.
    pub fn host_header(&self) -> String {
        let e = &self.endpoint;
        match e.host.contains(':') {
            true => format!("[{}]:{}", e.host, e.port),
            false => format!("{}:{}", e.host, e.port),
        }
    }

    /// Connect (from the next source address, if any), and shake hands
    /// over TLS for `wss://`/`https://`.
    pub async fn connect(&self) -> Result<Box<dyn Io>, Failure> {
        let addr = self.addr.ok_or(Failure::Connect(
            iolab_model::attack::ErrorClass::ConnectOther,
        ))?;
        let tcp = match self.sources.pick() {
            None => TcpStream::connect(addr).await,
            Some(ip) => crate::http::connect_from(addr, ip).await,
        }
        .map_err(|e| Failure::Connect(crate::http::connect_class(&e)))?;
        let _ = tcp.set_nodelay(true);
        match &self.tls {
            None => Ok(Box::new(tcp)),
            Some(tls) => {
                let s = tls.wrap(tcp).await.map_err(|_: io::Error| Failure::Tls)?;
                Ok(Box::new(s))
            }
        }
    }
}
