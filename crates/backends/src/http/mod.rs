//! `http:MS`: `GET {base}/delay?ms=MS` on iolab's delay service, with a
//! blocking client (ureq, keep-alive pool) and a non-blocking one (hyper-util's
//! pooled client). Neither limits concurrency: the delay service is not the
//! resource under study, so every caller gets a connection. Its counter is
//! the service's hits ([`delay_hits`]); the service itself is [`delay`],
//! which `iolab run` starts in process ([`service`]).

pub mod delay;
pub mod service;

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use iolab_model::steps::{BackendKind, IoCall};

use crate::backend::{micros, Backend, CallFuture, Clients, Pool};
use crate::{AddressError, BackendError, CountError, Service};

/// The HTTP delay service as a [`Backend`].
pub struct HttpBackend;

/// The one instance.
pub static HTTP: HttpBackend = HttpBackend;

impl Backend for HttpBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Http
    }

    fn check_address(&self, address: &str) -> Result<(), AddressError> {
        check_http_url(address)
    }

    fn normalise(&self, address: &str) -> String {
        address.trim_end_matches('/').to_string()
    }

    fn clients(&self, address: &str, _pool: Pool) -> Result<Box<dyn Clients>, BackendError> {
        Ok(Box::new(Http::new(address.to_string())))
    }

    fn count(&self, address: &str) -> Result<u64, CountError> {
        delay_hits(address)
    }

    fn service(&self) -> Option<&'static dyn Service> {
        Some(&service::DELAY)
    }
}

/// An `http://HOST:PORT` base URL (no TLS: the delay service is on loopback).
pub fn check_http_url(url: &str) -> Result<(), AddressError> {
    const FIX: &str = "use http://HOST:PORT, e.g. the URL `iolab backend http` prints";
    let bad = |wanted| AddressError::new(BackendKind::Http, url, wanted, FIX);
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| bad("an http:// URL"))?;
    let authority = rest.split('/').next().unwrap_or("");
    if authority.is_empty() || url.parse::<hyper::Uri>().is_err() {
        return Err(bad("a valid URL"));
    }
    Ok(())
}

/// Longest a connect may take before the backend counts as unavailable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Idle keep-alive connections kept per client (enough for any thread pool
/// a target runs, so no call pays a new handshake in steady state).
const MAX_IDLE: usize = 4096;

/// The delay URL for one call; `ms` keeps microsecond precision.
fn delay_url(base: &str, micros: u64) -> String {
    let base = base.trim_end_matches('/');
    format!("{base}/delay?ms={}", micros as f64 / 1000.0)
}

/// Both HTTP clients of one target.
#[derive(Debug)]
struct Http {
    base: String,
    blocking: ureq::Agent,
    nonblocking: OnceLock<Client<HttpConnector, Empty<Bytes>>>,
}

impl Http {
    fn new(base: String) -> Self {
        let blocking = ureq::AgentBuilder::new()
            .timeout_connect(CONNECT_TIMEOUT)
            .max_idle_connections(MAX_IDLE)
            .max_idle_connections_per_host(MAX_IDLE)
            .build();
        Http {
            base,
            blocking,
            nonblocking: OnceLock::new(),
        }
    }

    /// One delay call on the calling thread.
    fn delay_blocking(&self, micros: u64) -> Result<(), BackendError> {
        match self.blocking.get(&delay_url(&self.base, micros)).call() {
            Ok(resp) => {
                // Read the body to the end so the connection goes back to the pool.
                resp.into_string()
                    .map(|_| ())
                    .map_err(|e| BackendError::unavailable(BackendKind::Http, e))
            }
            Err(ureq::Error::Status(code, _)) => Err(BackendError::failed(
                BackendKind::Http,
                format!("delay service answered {code}"),
            )),
            Err(e) => Err(BackendError::unavailable(BackendKind::Http, e)),
        }
    }

    /// One delay call without blocking a thread.
    async fn delay_async(&self, micros: u64) -> Result<(), BackendError> {
        let client = self.nonblocking.get_or_init(|| {
            let mut connector = HttpConnector::new();
            connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
            connector.set_nodelay(true);
            Client::builder(TokioExecutor::new())
                .pool_max_idle_per_host(MAX_IDLE)
                .build(connector)
        });
        let uri: hyper::Uri = delay_url(&self.base, micros)
            .parse()
            .map_err(|e| BackendError::failed(BackendKind::Http, format!("bad URL: {e}")))?;
        let resp = client
            .get(uri)
            .await
            .map_err(|e| BackendError::unavailable(BackendKind::Http, error_chain(&e)))?;
        let status = resp.status();
        resp.into_body()
            .collect()
            .await
            .map_err(|e| BackendError::unavailable(BackendKind::Http, e))?;
        if status != hyper::StatusCode::OK {
            return Err(BackendError::failed(
                BackendKind::Http,
                format!("delay service answered {}", status.as_u16()),
            ));
        }
        Ok(())
    }
}

impl Clients for Http {
    fn blocking(&self, call: &IoCall) -> Result<Option<Bytes>, BackendError> {
        self.delay_blocking(micros(call)).map(|()| None)
    }

    fn nonblocking<'a>(&'a self, call: &'a IoCall) -> CallFuture<'a> {
        Box::pin(async move { self.delay_async(micros(call)).await.map(|()| None) })
    }
}

/// hyper-util's errors say little at the top ("client error (Connect)"); the
/// cause is what a user needs.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&s.to_string());
        cur = s.source();
    }
    out
}

/// The delay service's hit counter, read from its `/metrics`.
pub fn delay_hits(base: &str) -> Result<u64, CountError> {
    let url = format!("{}/metrics", base.trim_end_matches('/'));
    let body = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(10))
        .build()
        .get(&url)
        .call()
        .map_err(|e| CountError::DelayGet {
            url: url.clone(),
            why: Box::new(e),
        })?
        .into_string()
        .map_err(|why| CountError::DelayBody {
            url: url.clone(),
            why,
        })?;
    crate::delay::parse_hits(&body).ok_or(CountError::DelayNoHits(url))
}

#[cfg(test)]
mod tests {
    #[test]
    fn delay_urls_keep_fractions_of_a_millisecond() {
        assert_eq!(
            super::delay_url("http://h:1/", 500),
            "http://h:1/delay?ms=0.5"
        );
        assert_eq!(
            super::delay_url("http://h:1", 200_000),
            "http://h:1/delay?ms=200"
        );
    }
}
