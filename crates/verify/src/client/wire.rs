//! The bytes of one answer, read under one deadline and a body cap. Each
//! fault has its own message, since `verify` reports it as the check's detail.

use std::io::{self, BufRead, BufReader, Read};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_model::units::{format_bytes, format_duration};

/// Longest response head (status line and headers).
const MAX_HEAD: usize = 64 * 1024;
/// Most headers one answer may have.
const MAX_HEADERS: usize = 100;
/// Longest chunk-size or trailer line.
const MAX_LINE: usize = 4096;

/// Status, headers (names lower-cased) and body of an answer.
pub type Answer = (u16, Vec<(String, String)>, Vec<u8>);

/// A connection whose every read gets only the time left before one
/// deadline, so no peer can hold it longer, however it dribbles.
pub struct Conn {
    inner: BufReader<Deadline>,
}

struct Deadline {
    stream: TcpStream,
    deadline: Instant,
    budget: Duration,
    cancel: Option<Arc<AtomicBool>>,
}

/// Longest wait between two looks at the cancel flag.
pub const CANCEL_TICK: Duration = Duration::from_millis(100);

impl Conn {
    /// Read `stream` until `deadline` (`budget` after the call started), or
    /// until `cancel` is set.
    pub fn new(
        stream: TcpStream,
        deadline: Instant,
        budget: Duration,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Conn {
        Conn {
            inner: BufReader::new(Deadline {
                stream,
                deadline,
                budget,
                cancel,
            }),
        }
    }
}

impl Read for Deadline {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            check_cancel(self.cancel.as_deref())?;
            let left = left(self.deadline, self.budget)?;
            let wait = if self.cancel.is_some() {
                left.min(CANCEL_TICK)
            } else {
                left
            };
            self.stream.set_read_timeout(Some(wait))?;
            match self.stream.read(buf) {
                Err(e)
                    if wait < left
                        && matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                        ) => {}
                r => return r.map_err(|e| name_timeout(e, "no complete answer", self.budget)),
            }
        }
    }
}

/// An "interrupted" error once `cancel` is set (Ctrl-C). Not of kind
/// `ErrorKind::Interrupted`: `BufRead` and `read_exact` retry that kind, and
/// would spin on the flag instead of returning.
pub fn check_cancel(cancel: Option<&AtomicBool>) -> io::Result<()> {
    if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
        return Err(io::Error::other("interrupted"));
    }
    Ok(())
}

/// Time left before `deadline`, or a timeout error once it has passed.
pub fn left(deadline: Instant, budget: Duration) -> io::Result<Duration> {
    match deadline.checked_duration_since(Instant::now()) {
        Some(d) if !d.is_zero() => Ok(d),
        _ => Err(timed_out("no complete answer", budget)),
    }
}

/// A socket timeout (which Linux reports as "Resource temporarily
/// unavailable") as a `TimedOut` error that says what did not happen in time.
pub fn name_timeout(e: io::Error, what: &str, budget: Duration) -> io::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => timed_out(what, budget),
        _ => e,
    }
}

fn timed_out(what: &str, budget: Duration) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!("{what} within {}", format_duration(budget)),
    )
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

fn over_cap(cap: usize, why: &str) -> io::Error {
    invalid(format!(
        "body longer than the {} cap{why}",
        format_bytes(cap as u64)
    ))
}

/// Read one answer whose body is at most `cap` bytes.
pub fn read_response(conn: &mut Conn, cap: usize) -> io::Result<Answer> {
    let r = &mut conn.inner;
    let head = read_head(r)?;
    let (status, headers) = parse_head(&head)?;
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let body =
        if find("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
            read_chunked(r, cap)?
        } else if let Some(len) = find("content-length") {
            let len: u64 = len
                .parse()
                .map_err(|_| invalid(format!("bad Content-Length {len:?}")))?;
            if len > cap as u64 {
                return Err(over_cap(cap, &format!(" (Content-Length: {len})")));
            }
            let mut body = Vec::with_capacity(len.min(64 * 1024) as usize);
            r.by_ref().take(len).read_to_end(&mut body)?;
            if (body.len() as u64) < len {
                return Err(invalid(format!("body shorter than Content-Length {len}")));
            }
            body
        } else {
            let mut body = Vec::new();
            r.by_ref().take(cap as u64 + 1).read_to_end(&mut body)?;
            if body.len() > cap {
                return Err(over_cap(cap, ""));
            }
            body
        };
    Ok((status, headers, body))
}

/// Everything up to and including the blank line after the headers.
fn read_head(r: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > MAX_HEAD {
            return Err(invalid("response head longer than 64 KiB"));
        }
        let room = (MAX_HEAD + 1 - head.len()) as u64;
        if r.by_ref().take(room).read_until(b'\n', &mut head)? == 0 {
            return Err(invalid(if head.is_empty() {
                "connection closed without an answer".to_string()
            } else {
                format!(
                    "answer is not HTTP: {:?}",
                    String::from_utf8_lossy(&head[..head.len().min(60)])
                )
            }));
        }
    }
    Ok(head)
}

fn parse_head(head: &[u8]) -> io::Result<(u16, Vec<(String, String)>)> {
    let line_end = head.iter().position(|b| *b == b'\r').unwrap_or(head.len());
    let status_line = String::from_utf8_lossy(&head[..line_end]);
    if !status_line.starts_with("HTTP/1.") {
        return Err(invalid(format!("answer is not HTTP/1.x: {status_line:?}")));
    }
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut slots);
    match resp.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(invalid("response head cut short")),
        Err(e) => return Err(invalid(format!("bad response head ({e}): {status_line:?}"))),
    }
    let status = resp
        .code
        .ok_or_else(|| invalid(format!("bad status line {status_line:?}")))?;
    let headers = resp
        .headers
        .iter()
        .map(|h| {
            let value = String::from_utf8_lossy(h.value).trim().to_string();
            (h.name.to_ascii_lowercase(), value)
        })
        .collect();
    Ok((status, headers))
}

/// A chunked body, decoded as it arrives (so the cap counts body bytes).
fn read_chunked(r: &mut impl BufRead, cap: usize) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(r)?;
        if line.is_empty() {
            return Err(invalid("chunked body cut short"));
        }
        let size = match httparse::parse_chunk_size(&line) {
            Ok(httparse::Status::Complete((_, size))) => size,
            _ => return Err(invalid("bad chunk size")),
        };
        if size == 0 {
            // Trailers, if any, up to the blank line (or the peer's close).
            while !matches!(read_line(r)?.as_slice(), b"" | b"\r\n" | b"\n") {}
            return Ok(body);
        }
        if body.len() as u64 + size > cap as u64 {
            return Err(over_cap(cap, " (chunked)"));
        }
        let start = body.len();
        r.by_ref().take(size).read_to_end(&mut body)?;
        if ((body.len() - start) as u64) < size || read_line(r)? != b"\r\n" {
            return Err(invalid("chunked body cut short"));
        }
    }
}

/// One line of at most [`MAX_LINE`] bytes, its end included (empty at EOF).
fn read_line(r: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut line = Vec::new();
    r.by_ref()
        .take(MAX_LINE as u64)
        .read_until(b'\n', &mut line)?;
    if line.len() >= MAX_LINE && !line.ends_with(b"\n") {
        return Err(invalid("chunk line longer than 4 KiB"));
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(raw: &[u8], cap: usize) -> io::Result<Vec<u8>> {
        read_chunked(&mut &raw[..], cap)
    }

    #[test]
    fn dechunks() {
        assert_eq!(
            body(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", 100).unwrap(),
            b"abcde"
        );
        assert_eq!(
            body(b"3;x=1\r\nabc\r\n0\r\nT: v\r\n\r\n", 100).unwrap(),
            b"abc"
        );
        assert!(body(b"zz\r\n", 100).is_err());
        assert!(body(b"3\r\nab", 100).is_err());
        let e = body(b"3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n", 4).unwrap_err();
        assert!(e.to_string().contains("4 bytes cap"), "{e}");
    }

    #[test]
    fn heads_parse_strictly() {
        let (status, headers) =
            parse_head(b"HTTP/1.1 503 Busy\r\nContent-Type: text/plain\r\n\r\n").unwrap();
        assert_eq!(status, 503);
        assert_eq!(headers, [("content-type".into(), "text/plain".into())]);
        assert_eq!(parse_head(b"HTTP/1.0 200\r\n\r\n").unwrap().0, 200);
        let e = parse_head(b"hello there\r\n\r\n").unwrap_err();
        assert!(e.to_string().contains("not HTTP/1.x"), "{e}");
        assert!(parse_head(b"HTTP/1.1 abc OK\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n").is_err());
    }
}
