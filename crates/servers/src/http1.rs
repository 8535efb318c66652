//! A small HTTP/1.1 server side for the thread models, on blocking std
//! sockets: read one request head (keep-alive, `Content-Length` bodies are
//! read and dropped), write one answer with `Content-Length`.
//!
//! Hand-written on purpose: the thread models must hold exactly one OS thread
//! per request being served, with nothing async underneath.

use std::io::{self, IoSlice, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::routes::{reason, Reply};

/// Longest request head accepted (request line + headers).
pub const MAX_HEAD: usize = 16 * 1024;
/// Largest request body read (and dropped).
pub const MAX_BODY: usize = 1024 * 1024;
/// How long a started request may take to arrive (Tomcat connectionTimeout 20 s).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// How long an idle keep-alive connection is kept (Tomcat keepAliveTimeout
/// defaults to connectionTimeout).
pub const KEEP_ALIVE: Duration = Duration::from_secs(20);

/// One request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `HEAD`, ...
    pub method: String,
    /// The request target, e.g. `/work?steps=sleep:100`.
    pub target: String,
    /// May the connection carry another request after this one?
    pub keep_alive: bool,
    /// `Sec-WebSocket-Key`, when the request asks `Upgrade: websocket`
    /// (`GET /ws`, [`crate::held`]).
    pub websocket_key: Option<String>,
}

/// What reading from a connection gave.
#[derive(Debug)]
pub enum Incoming {
    /// A whole request.
    Request(Request),
    /// The peer closed (or went idle too long) between requests.
    Closed,
    /// The bytes are not HTTP/1.x we can serve: answer this and close.
    Bad(Reply),
}

/// Read one request from `stream`, keeping bytes past its end in `buf`.
///
/// The stream's read timeout is the polling tick: after each tick without
/// data, `keep_waiting(waited, partial)` decides whether to go on (e.g. until
/// the keep-alive or request timeout, or a shutdown).
pub fn read_request(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    keep_waiting: &dyn Fn(Duration, bool) -> bool,
) -> io::Result<Incoming> {
    let started = Instant::now();
    loop {
        let head = match parse_head(buf) {
            Ok(Some(h)) => h,
            Ok(None) => {
                let partial = !buf.is_empty();
                if !fill(stream, buf, started, &|w| keep_waiting(w, partial))? {
                    return Ok(Incoming::Closed);
                }
                continue;
            }
            Err(reply) => return Ok(Incoming::Bad(reply)),
        };
        let total = head.len + head.body_len;
        if head.expect_continue && buf.len() < total {
            stream.write_all(CONTINUE)?;
        }
        while buf.len() < total {
            if !fill(stream, buf, started, &|w| keep_waiting(w, true))? {
                return Ok(Incoming::Closed);
            }
        }
        buf.drain(..total);
        return Ok(Incoming::Request(head.request));
    }
}

/// Read more bytes; false when the peer closed or `keep_waiting` gave up.
fn fill(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    started: Instant,
    keep_waiting: &dyn Fn(Duration) -> bool,
) -> io::Result<bool> {
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(false),
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return Ok(true);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if !keep_waiting(started.elapsed()) {
                    return Ok(false);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The interim answer to `Expect: 100-continue`: the client may send the body.
pub(crate) const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";
/// Most header lines in a request head (nginx refuses a head over its
/// buffers; 100 is what browsers and proxies stay far below).
const MAX_HEADERS: usize = 100;

/// A parsed request head.
#[derive(Debug)]
pub(crate) struct Head {
    /// The request.
    pub request: Request,
    /// Bytes of the head (request line, headers, blank line).
    pub len: usize,
    /// Bytes of the body that follows.
    pub body_len: usize,
    /// `Expect: 100-continue` on an HTTP/1.1 request with a body: the
    /// client waits for `100 Continue` before sending it.
    pub expect_continue: bool,
}

/// The request head at the start of `buf`: `None` until it is whole, or the
/// answer refusing it. The grammar is `httparse`'s (bare-LF line ends, as
/// RFC 9112 lets a server accept); a head over [`MAX_HEAD`] is a 431, a
/// body over [`MAX_BODY`] a 413, and a repeated or non-digit
/// `Content-Length` (or a second `Host`) a 400: two lengths are how a
/// request is smuggled past a proxy that reads the other one.
pub(crate) fn parse_head(buf: &[u8]) -> Result<Option<Head>, Reply> {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut slots);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
            return Err(Reply::error(431, "request head too large"))
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(Reply::error(431, "too many request headers"))
        }
        Err(_) => return Err(Reply::error(400, "bad request head")),
    };
    if len > MAX_HEAD {
        return Err(Reply::error(431, "request head too large"));
    }
    let http11 = req.version == Some(1);
    let (mut keep_alive, mut body_len, mut expect) = (http11, None, false);
    let (mut upgrade, mut ws_key) = (false, None);
    // RFC 9112 3.2: more than one Host is a 400; which one a proxy in front
    // routed on is unknown (issue 49 finding 24: two were answered 200).
    if req
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("host"))
        .count()
        > 1
    {
        return Err(Reply::error(400, "more than one Host header"));
    }
    for h in req.headers.iter() {
        let value = std::str::from_utf8(h.value)
            .map_err(|_| Reply::error(400, "header value is not UTF-8"))?
            .trim();
        if h.name.eq_ignore_ascii_case("connection") {
            let v = value.to_ascii_lowercase();
            if v.contains("close") {
                keep_alive = false;
            } else if v.contains("keep-alive") {
                keep_alive = true;
            }
        } else if h.name.eq_ignore_ascii_case("content-length") {
            if body_len.is_some() {
                return Err(Reply::error(400, "duplicate Content-Length"));
            }
            body_len = Some(content_length(value)?);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(Reply::error(501, "chunked request bodies are not served"));
        } else if h.name.eq_ignore_ascii_case("expect") {
            expect = value.eq_ignore_ascii_case("100-continue");
        } else if h.name.eq_ignore_ascii_case("upgrade") {
            upgrade = value.to_ascii_lowercase().contains("websocket");
        } else if h.name.eq_ignore_ascii_case("sec-websocket-key") {
            ws_key = Some(value.to_string());
        }
    }
    let body_len = body_len.unwrap_or(0);
    if body_len > MAX_BODY {
        return Err(Reply::error(413, "request body too large"));
    }
    let request = Request {
        method: req.method.unwrap_or_default().to_string(),
        target: req.path.unwrap_or_default().to_string(),
        keep_alive,
        websocket_key: ws_key.filter(|_| upgrade),
    };
    Ok(Some(Head {
        request,
        len,
        body_len,
        expect_continue: expect && http11 && body_len > 0,
    }))
}

/// A `Content-Length` value: digits only (`+5`, `5, 5` and ` ` are refused).
fn content_length(value: &str) -> Result<usize, Reply> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Reply::error(400, "bad Content-Length"));
    }
    // Past usize is past MAX_BODY: refused as too large.
    Ok(value.parse().unwrap_or(usize::MAX))
}

/// Write `reply`: the head and the body in one vectored write (a fetched
/// value is written from its own buffer, never copied behind the head);
/// `head_only` for HEAD requests.
pub fn write_reply(
    stream: &mut TcpStream,
    reply: &Reply,
    keep_alive: bool,
    head_only: bool,
) -> io::Result<()> {
    let head = reply_head(reply, keep_alive);
    let body: &[u8] = if head_only { &[] } else { &reply.body };
    write_all_vectored(stream, &mut [IoSlice::new(&head), IoSlice::new(body)])
}

/// The status line and headers of `reply`.
pub(crate) fn reply_head(reply: &Reply, keep_alive: bool) -> Vec<u8> {
    let mut head = Vec::with_capacity(160);
    let _ = write!(
        head,
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}\r\n",
        reply.status,
        reason(reply.status),
        reply.content_type,
        reply.body.len(),
        if keep_alive {
            ""
        } else {
            "Connection: close\r\n"
        },
    );
    head
}

/// Longest a connection is drained after an error answer.
pub const LINGER: Duration = Duration::from_secs(2);
/// Most bytes dropped while draining.
const LINGER_BYTES: usize = 1 << 20;

/// Answer a request that cannot be served (431, 413, 400) and close without
/// resetting the answer away: stop writing (FIN), then read and drop what
/// the client still sends until it closes, [`LINGER`] passes or 1 MiB is
/// dropped (Apache's lingering close). Closing with unread bytes sends a
/// RST, and a client still writing a 40 KB URL would see the reset, never
/// the 431.
pub fn answer_and_linger(stream: &mut TcpStream, reply: &Reply) {
    if write_reply(stream, reply, false, false).is_err() {
        return;
    }
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let end = Instant::now() + LINGER;
    let mut chunk = [0u8; 4096];
    let mut dropped = 0;
    while dropped < LINGER_BYTES {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => dropped += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// `write_all` over several buffers (std's `write_all_vectored` is unstable).
fn write_all_vectored(out: &mut impl Write, mut bufs: &mut [IoSlice<'_>]) -> io::Result<()> {
    IoSlice::advance_slices(&mut bufs, 0);
    while !bufs.is_empty() {
        match out.write_vectored(bufs) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut bufs, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(bytes: &[u8]) -> Head {
        parse_head(bytes).unwrap().unwrap()
    }

    #[test]
    fn parses_heads() {
        let h = head(b"GET /work?steps=sleep:1 HTTP/1.1\r\nHost: x\r\n\r\nrest");
        assert_eq!(h.request.target, "/work?steps=sleep:1");
        assert!(h.request.keep_alive);
        assert_eq!((h.len, h.body_len), (45, 0));
        let h = head(b"POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\n");
        assert!(!h.request.keep_alive);
        assert_eq!(h.body_len, 5);
        assert!(
            !head(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
                .request
                .keep_alive
        );
        assert_eq!(parse_head(b"garbage\r\n\r\n").unwrap_err().status, 400);
        assert!(parse_head(b"GET / HTTP/1.1\r\nHost: x\r\n")
            .unwrap()
            .is_none());
    }

    #[test]
    fn r30_19_lf_only_heads_and_expect_continue() {
        let h = head(b"GET /health HTTP/1.1\n\n");
        assert_eq!((h.request.target.as_str(), h.len), ("/health", 22));
        let h = head(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n");
        assert!(h.expect_continue);
        // No body, or HTTP/1.0: nothing to wait for.
        assert!(!head(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n").expect_continue);
        let h = head(b"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n");
        assert!(!h.expect_continue);
    }

    #[test]
    fn r30_19_duplicate_or_signed_content_length_is_400() {
        for bad in [
            &b"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n"[..],
            b"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: +2\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 2, 2\r\n\r\n",
        ] {
            let reply = parse_head(bad).unwrap_err();
            assert_eq!(reply.status, 400, "{}", String::from_utf8_lossy(bad));
        }
        let many: String = (0..=MAX_HEADERS).map(|i| format!("X-{i}: v\r\n")).collect();
        let text = format!("GET / HTTP/1.1\r\n{many}\r\n");
        assert_eq!(parse_head(text.as_bytes()).unwrap_err().status, 431);
    }

    #[test]
    fn vectored_writes_survive_short_writes() {
        /// A writer that takes at most 3 bytes per call.
        struct Trickle(Vec<u8>);
        impl Write for Trickle {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                let n = b.len().min(3);
                self.0.extend_from_slice(&b[..n]);
                Ok(n)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut out = Trickle(Vec::new());
        let (a, b) = (b"head\r\n".to_vec(), vec![9u8; 1000]);
        write_all_vectored(&mut out, &mut [IoSlice::new(&a), IoSlice::new(&b)]).unwrap();
        assert_eq!(out.0.len(), a.len() + b.len());
        assert_eq!(&out.0[..a.len()], &a[..]);
        assert!(out.0[a.len()..].iter().all(|&x| x == 9));
    }
}
