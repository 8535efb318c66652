//! The bytes of one answer, read under one deadline and a body cap. Each
//! fault has its own message, since `verify` reports it as the check's detail.
//! What an answer is (interim heads, framing, header limit, chunked coding)
//! is the generator's judgement, `iolab_loadgen::response`, not a second one.

use std::io::{self, BufRead, BufReader, Read};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_loadgen::response::{self, Chunked, Framing, Head, Malformed};
use iolab_model::units::{format_bytes, format_duration};

/// Status, headers (names lower-cased) and body of an answer.
pub type Answer = (u16, Headers, Vec<u8>);

/// Headers in order: names lower-cased, values trimmed text.
pub type Headers = Vec<(String, String)>;

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

/// Read one answer whose body is at most `cap` bytes. Heads are judged by
/// the generator's reader (`iolab_loadgen::response`): interim answers
/// (`100 Continue`, `103 Early Hints`) are skipped for the final one, and a
/// framing conflict is refused as `attack` would count it `read`.
pub fn read_response(conn: &mut Conn, cap: usize) -> io::Result<Answer> {
    let r = &mut conn.inner;
    let (status, headers, framing) = read_final_head(r)?;
    let body = match framing {
        Framing::Chunked => read_chunked(r, cap)?,
        Framing::Length(len) => {
            if len > cap as u64 {
                return Err(over_cap(cap, &format!(" (Content-Length: {len})")));
            }
            let mut body = Vec::with_capacity(len.min(64 * 1024) as usize);
            r.by_ref().take(len).read_to_end(&mut body)?;
            if (body.len() as u64) < len {
                return Err(invalid(format!("body shorter than Content-Length {len}")));
            }
            body
        }
        Framing::UntilClose => {
            let mut body = Vec::new();
            r.by_ref().take(cap as u64 + 1).read_to_end(&mut body)?;
            if body.len() > cap {
                return Err(over_cap(cap, ""));
            }
            body
        }
    };
    Ok((status, headers, body))
}

/// Read heads until the final one (skipping up to
/// [`response::MAX_INTERIM`] interim answers); its status, headers and
/// framing.
fn read_final_head(r: &mut impl BufRead) -> io::Result<(u16, Headers, Framing)> {
    let limits = response::Limits::default();
    let mut interim = 0;
    loop {
        let head = read_head(r, limits.max_head, interim)?;
        let status_line = status_line(&head);
        let bad = |why: &str| invalid(format!("bad response head ({why}): {status_line:?}"));
        match response::parse_kept(&head, &limits) {
            Ok((
                Head::Final {
                    status, framing, ..
                },
                headers,
            )) => return Ok((status, headers, framing)),
            Ok((Head::Interim(_), _)) if interim < response::MAX_INTERIM => interim += 1,
            Ok((Head::Interim(_), _)) => {
                return Err(bad(&format!(
                    "more than {} interim answers",
                    response::MAX_INTERIM
                )))
            }
            Ok((Head::Partial, _)) => return Err(bad("cut short")),
            Err(Malformed(why)) => return Err(bad(why)),
        }
    }
}

/// The first line of a head, for messages.
fn status_line(head: &[u8]) -> String {
    let end = head.iter().position(|b| *b == b'\r' || *b == b'\n');
    String::from_utf8_lossy(&head[..end.unwrap_or(head.len())]).into_owned()
}

/// One head: its lines up to and including the blank line that ends it,
/// at most `max` bytes. A first line that is not an HTTP/1.x status line
/// is refused at once. `interim`: heads read before this one.
fn read_head(r: &mut impl BufRead, max: usize, interim: u32) -> io::Result<Vec<u8>> {
    let mut head = Vec::new();
    loop {
        let start = head.len();
        let room = (max + 1 - start) as u64;
        if r.by_ref().take(room).read_until(b'\n', &mut head)? == 0 {
            return Err(invalid(match (head.is_empty(), interim) {
                (true, 0) => "connection closed without an answer".to_string(),
                (true, n) => {
                    format!("connection closed after {n} interim answers, before the final one")
                }
                (false, _) => format!(
                    "answer cut short: {:?}",
                    String::from_utf8_lossy(&head[..head.len().min(60)])
                ),
            }));
        }
        if start == 0 && !head.starts_with(b"HTTP/1.") {
            return Err(invalid(format!(
                "answer is not HTTP/1.x: {:?}",
                status_line(&head)
            )));
        }
        if head.len() > max {
            return Err(invalid(format!(
                "response head longer than {}",
                format_bytes(max as u64)
            )));
        }
        if matches!(&head[start..], b"\r\n" | b"\n") {
            return Ok(head);
        }
    }
}

/// A chunked body, decoded by the generator's [`Chunked`] as it arrives
/// (so the cap counts body bytes).
fn read_chunked(r: &mut impl BufRead, cap: usize) -> io::Result<Vec<u8>> {
    let mut dec = Chunked::default();
    let mut body = Vec::new();
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Err(invalid("chunked body cut short"));
        }
        let fed = buf.len();
        let end = dec
            .feed_with(buf, &mut |data| body.extend_from_slice(data))
            .map_err(|Malformed(why)| invalid(format!("bad chunked body ({why})")))?;
        if body.len() > cap {
            return Err(over_cap(cap, " (chunked)"));
        }
        match end {
            Some(rest) => {
                r.consume(fed - rest);
                return Ok(body);
            }
            None => r.consume(fed),
        }
    }
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

    fn head(raw: &[u8]) -> io::Result<(u16, Headers, Framing)> {
        read_final_head(&mut &raw[..])
    }

    #[test]
    fn heads_parse_strictly() {
        let (status, headers, framing) =
            head(b"HTTP/1.1 503 Busy\r\nContent-Type: text/plain\r\n\r\n").unwrap();
        assert_eq!((status, framing), (503, Framing::UntilClose));
        assert_eq!(headers, [("content-type".into(), "text/plain".into())]);
        assert_eq!(head(b"HTTP/1.0 200\r\n\r\n").unwrap().0, 200);
        let e = head(b"hello there\r\n\r\n").unwrap_err();
        assert!(e.to_string().contains("not HTTP/1.x"), "{e}");
        assert!(head(b"HTTP/1.1 abc OK\r\n\r\n").is_err());
        assert!(head(b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n").is_err());
        let e =
            head(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n").unwrap_err();
        assert!(
            e.to_string().contains("two different Content-Lengths"),
            "{e}"
        );
    }

    #[test]
    fn interim_heads_are_skipped_for_the_final_one() {
        let raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\
                    Link: </a.css>\r\n\r\nHTTP/1.1 204 No Content\r\nX-Final: 1\r\n\r\n";
        let (status, headers, framing) = head(raw).unwrap();
        assert_eq!((status, framing), (204, Framing::Length(0)));
        assert_eq!(headers, [("x-final".into(), "1".into())]);
        let e = head(b"HTTP/1.1 103 Early Hints\r\n\r\n").unwrap_err();
        assert!(e.to_string().contains("after 1 interim answers"), "{e}");
    }
}
