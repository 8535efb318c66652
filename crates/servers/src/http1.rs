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
        if let Some(end) = find_head_end(buf) {
            let head = match parse_head(&buf[..end]) {
                Ok(h) => h,
                Err(reply) => return Ok(Incoming::Bad(reply)),
            };
            let (req, body_len) = head;
            if body_len > MAX_BODY {
                return Ok(Incoming::Bad(Reply::error(413, "request body too large")));
            }
            let total = end + body_len;
            while buf.len() < total {
                if !fill(stream, buf, started, &|w| keep_waiting(w, true))? {
                    return Ok(Incoming::Closed);
                }
            }
            buf.drain(..total);
            return Ok(Incoming::Request(req));
        }
        if buf.len() > MAX_HEAD {
            return Ok(Incoming::Bad(Reply::error(431, "request head too large")));
        }
        let partial = !buf.is_empty();
        if !fill(stream, buf, started, &|w| keep_waiting(w, partial))? {
            return Ok(Incoming::Closed);
        }
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

/// Where the head in `buf` ends (after its blank line), if it has.
pub(crate) fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

/// The request in a head, and its body's length; or the answer refusing it.
pub(crate) fn parse_head(head: &[u8]) -> Result<(Request, usize), Reply> {
    let text =
        std::str::from_utf8(head).map_err(|_| Reply::error(400, "request head is not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Reply::error(400, "bad request line"));
    };
    let http11 = match version {
        "HTTP/1.1" => true,
        "HTTP/1.0" => false,
        _ => return Err(Reply::error(400, "only HTTP/1.0 and HTTP/1.1 are served")),
    };
    let mut keep_alive = http11;
    let mut body_len = 0usize;
    for h in lines.filter(|l| !l.is_empty()) {
        let Some((name, value)) = h.split_once(':') else {
            return Err(Reply::error(400, "bad header line"));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("connection") {
            let v = value.to_ascii_lowercase();
            if v.contains("close") {
                keep_alive = false;
            } else if v.contains("keep-alive") {
                keep_alive = true;
            }
        } else if name.eq_ignore_ascii_case("content-length") {
            body_len = value
                .parse()
                .map_err(|_| Reply::error(400, "bad Content-Length"))?;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(Reply::error(501, "chunked request bodies are not served"));
        }
    }
    Ok((
        Request {
            method: method.to_string(),
            target: target.to_string(),
            keep_alive,
        },
        body_len,
    ))
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

    #[test]
    fn parses_heads() {
        let (r, n) = parse_head(b"GET /work?steps=sleep:1 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(r.target, "/work?steps=sleep:1");
        assert!(r.keep_alive);
        assert_eq!(n, 0);
        let (r, n) = parse_head(b"POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\n").unwrap();
        assert!(!r.keep_alive);
        assert_eq!(n, 5);
        let (r, _) = parse_head(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n").unwrap();
        assert!(!r.keep_alive);
        assert_eq!(parse_head(b"garbage\r\n\r\n").unwrap_err().status, 400);
        assert_eq!(find_head_end(b"GET / HTTP/1.1\r\n\r\nrest"), Some(18));
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
