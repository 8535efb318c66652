//! iolab's one blocking GET, HTTP/1.1 (or h2c, [`h2`], for `verify --http2`): `verify` checks a target with it byte
//! by byte, and `lab` reads `/health` and `/metrics` with it. One request per
//! connection (`Connection: close`); `Content-Length`, chunked or
//! read-to-close bodies.
//!
//! Every call is bounded, whatever the peer does ([`Limits`]): a connect
//! timeout, one deadline for the whole exchange (a peer trickling a byte at a
//! time cannot stretch it, as it could a per-read timeout), and a cap on the
//! body (a huge or endless body fails naming the cap, without growing memory).
//!
//! Written on `httparse` (hyper's parser) rather than a client crate: verify
//! must send exactly the bytes it is given (no URL normalisation, no extra
//! headers), report each framing fault of a target by name, and read an early
//! answer after a failed write; ureq and reqwest hide all three. What an
//! answer is (interim heads skipped, header limit, framing) is decided by the
//! generator's own reader (`iolab_loadgen::response`, see [`wire`]), so
//! `verify` and `attack` cannot read one answer two ways. Deliberately
//! independent of every server iolab has.

mod h2;
mod wire;

use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::VerifyError;

/// Largest body read unless the caller says otherwise: far above any
/// `/metrics` page or contract answer, far below what would hurt.
pub const MAX_BODY: usize = iolab_model::limits::MAX_HTTP_BODY;

/// How long and how much one GET may take.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    /// Longest wait for the connection.
    pub connect: Duration,
    /// Longest time for the whole exchange, from before connecting to the
    /// last body byte.
    pub deadline: Duration,
    /// Largest body accepted; a longer one is an error naming this cap.
    pub max_body: usize,
    /// Once set (Ctrl-C), the GET ends within [`wire::CANCEL_TICK`] with an
    /// "interrupted" error.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Limits {
    /// Connect and answer within `timeout` in all, body up to [`MAX_BODY`].
    pub fn within(timeout: Duration) -> Limits {
        Limits {
            connect: timeout,
            deadline: timeout,
            max_body: MAX_BODY,
            cancel: None,
        }
    }
}

/// Where a target is reached (its base URL, resolved): socket address, Host
/// header and path prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The resolved address.
    pub addr: SocketAddr,
    /// `host:port` for the Host header.
    pub host: String,
    /// Path prefix without a trailing slash (usually empty).
    pub base: String,
    /// Speak HTTP/2 with prior knowledge (h2c), not HTTP/1.1.
    pub http2: bool,
}

/// One answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Headers in order, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// Body as text (lossy UTF-8).
    pub body: String,
    /// From sending the request to the last body byte.
    pub elapsed: Duration,
}

impl HttpResponse {
    /// The first header called `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `GET url` (`http://HOST:PORT/PATH?QUERY`) within `timeout` in all.
pub fn get(url: &str, timeout: Duration) -> io::Result<HttpResponse> {
    let (target, path) = Endpoint::split(url)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    target.get(if path.is_empty() { "/" } else { path }, timeout)
}

impl Endpoint {
    /// Read `http://HOST:PORT[/PREFIX]`.
    pub fn parse(url: &str) -> Result<Endpoint, VerifyError> {
        let (mut target, path) = Endpoint::split(url)?;
        if path.contains('?') || path.contains('#') {
            return Err(bad_url(url, "give the base URL, without a query"));
        }
        target.base = path.trim_end_matches('/').to_string();
        Ok(target)
    }

    /// The target at `url`'s authority (no prefix) and the rest of `url`.
    fn split(url: &str) -> Result<(Endpoint, &str), VerifyError> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| bad_url(url, "only http:// targets can be verified"))?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if authority.is_empty() {
            return Err(bad_url(url, "missing host"));
        }
        let has_port = match authority.rfind(']') {
            Some(i) => authority[i..].contains(':'),
            None => authority.contains(':'),
        };
        let with_port = if has_port {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        let addrs: Vec<SocketAddr> = with_port
            .to_socket_addrs()
            .map_err(|e| bad_url(url, &format!("cannot resolve '{authority}': {e}")))?
            .collect();
        // iolab's servers listen on 127.0.0.1: `localhost` means that one,
        // even where the resolver lists ::1 first.
        let addr = addrs
            .iter()
            .find(|a| a.is_ipv4())
            .or(addrs.first())
            .copied()
            .ok_or_else(|| bad_url(url, "host resolves to no address"))?;
        let target = Endpoint {
            addr,
            host: authority.to_string(),
            base: String::new(),
            http2: false,
        };
        Ok((target, path))
    }

    /// `GET base+path`, within `timeout` for connecting and answering in all.
    pub fn get(&self, path: &str, timeout: Duration) -> io::Result<HttpResponse> {
        self.get_with(path, &Limits::within(timeout))
    }

    /// `GET base+path` within `limits`.
    pub fn get_with(&self, path: &str, limits: &Limits) -> io::Result<HttpResponse> {
        if self.http2 {
            return h2::get(self, path, limits);
        }
        let deadline = Instant::now() + limits.deadline;
        let connect = limits.connect.min(limits.deadline);
        let mut stream = self.connect(connect, limits.cancel.as_deref())?;
        let _ = stream.set_nodelay(true);
        let started = Instant::now();
        let request = format!(
            "GET {}{} HTTP/1.1\r\nHost: {}\r\nUser-Agent: iolab/{}\r\nAccept: */*\r\nConnection: close\r\n\r\n",
            self.base,
            path,
            self.host,
            env!("CARGO_PKG_VERSION")
        );
        stream.set_write_timeout(Some(wire::left(deadline, limits.deadline)?))?;
        // One write: a target that answers before reading everything must
        // not turn into a broken pipe here. If the write fails anyway, an
        // answer may still be waiting: read it before giving up.
        let written = stream.write_all(request.as_bytes());
        let mut conn = wire::Conn::new(stream, deadline, limits.deadline, limits.cancel.clone());
        let answer = wire::read_response(&mut conn, limits.max_body);
        let (status, headers, body) = match (written, answer) {
            (Err(e), Err(_)) => return Err(e),
            (_, answer) => answer?,
        };
        Ok(HttpResponse {
            status,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
            elapsed: started.elapsed(),
        })
    }
}

impl Endpoint {
    /// Connect within `within`, looking at `cancel` every
    /// [`wire::CANCEL_TICK`] (a full backlog drops SYNs: a connect can wait).
    fn connect(&self, within: Duration, cancel: Option<&AtomicBool>) -> io::Result<TcpStream> {
        let end = Instant::now() + within;
        loop {
            wire::check_cancel(cancel)?;
            let left = end.saturating_duration_since(Instant::now());
            let wait = if cancel.is_some() {
                left.min(wire::CANCEL_TICK)
            } else {
                left
            };
            if wait.is_zero() {
                return Err(wire::name_timeout(
                    io::ErrorKind::TimedOut.into(),
                    "no connection",
                    within,
                ));
            }
            match TcpStream::connect_timeout(&self.addr, wait) {
                Err(e) if wait < left && e.kind() == io::ErrorKind::TimedOut => {}
                r => return r.map_err(|e| wire::name_timeout(e, "no connection", within)),
            }
        }
    }
}

fn bad_url(url: &str, why: &str) -> VerifyError {
    VerifyError::BadUrl(format!(
        "bad URL '{url}': {why} (use e.g. http://127.0.0.1:8080)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_urls() {
        let t = Endpoint::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(t.addr.port(), 8080);
        assert_eq!(t.base, "");
        let t = Endpoint::parse("http://127.0.0.1:9/app/").unwrap();
        assert_eq!(t.base, "/app");
        assert_eq!(Endpoint::parse("http://127.0.0.1").unwrap().addr.port(), 80);
        assert!(Endpoint::parse("https://x:1").is_err());
        assert!(Endpoint::parse("127.0.0.1:80").is_err());
        assert!(Endpoint::parse("http://").is_err());
        assert!(Endpoint::parse("http://127.0.0.1:notaport").is_err());
        assert!(Endpoint::parse("http://127.0.0.1:9/work?steps=cpu:1").is_err());
    }

    #[test]
    fn full_urls_split_into_target_and_path() {
        let (t, path) = Endpoint::split("http://127.0.0.1:9/work?steps=cpu:1").unwrap();
        assert_eq!((t.addr.port(), t.base.as_str()), (9, ""));
        assert_eq!(path, "/work?steps=cpu:1");
        assert_eq!(Endpoint::split("http://127.0.0.1:9").unwrap().1, "");
        let bad = get("127.0.0.1:9/health", Duration::from_secs(1)).unwrap_err();
        assert_eq!(bad.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn localhost_is_the_ipv4_loopback() {
        let t = Endpoint::parse("http://localhost:8080").unwrap();
        assert_eq!(t.addr, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(t.host, "localhost:8080");
    }
}
