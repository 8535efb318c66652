//! One Server-Sent Events connection's life: `GET` with `Accept:
//! text/event-stream`, a 200 of that type within the timeout, then events
//! read for `--hold` (lines end in LF, CRLF or CR; an empty line ends an
//! event), each numbered by its `id:` (gaps are lost events) and timed
//! from the `sent_unix_us` the server wrote in its data (one host's wall
//! clock: the lab serves on the generator's host).
//!
//! Bounded: the answer's head at [`MAX_HEAD`], an event (or a line that
//! never ends) at [`MAX_EVENT`]: past it the connection ends as
//! `oversize` and nothing more is buffered.

use std::rc::Rc;
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::account::{Ending, Failure, Tally};
use super::conn::Io;
use super::{instant_of, Run};
use crate::clock::now_ns;
use crate::response::chunked::Chunked;

/// Largest answer head.
pub const MAX_HEAD: usize = 64 << 10;
/// Largest event, or line without an end.
pub const MAX_EVENT: usize = 1 << 20;

/// Open connection `at` (run-clock ns), read its events for the hold, book it.
pub async fn hold(run: Rc<Run>, at: u64) {
    {
        let mut books = run.books.borrow_mut();
        books.late_by(now_ns().saturating_sub(at));
        books.attempted();
    }
    let deadline = at + run.plan.timeout.as_nanos() as u64;
    let opened = tokio::time::timeout_at(instant_of(deadline), open(&run)).await;
    let latency_us = now_ns().saturating_sub(at) / 1_000;
    let (io, body) = match opened {
        Ok(Ok(open)) => open,
        Ok(Err(why)) => return run.books.borrow_mut().failed(&why, latency_us),
        Err(_) => return run.books.borrow_mut().failed(&Failure::Timeout, latency_us),
    };
    run.books.borrow_mut().established(200, latency_us);
    let (ending, tally) = read_events(&run, io, body).await;
    run.books.borrow_mut().ended(&ending, &tally);
}

/// What follows the head: the body's framing and the bytes already read.
struct Body {
    chunked: Option<Chunked>,
    rest: Vec<u8>,
}

async fn open(run: &Run) -> Result<(Box<dyn Io>, Body), Failure> {
    let mut io = run.target.connect().await?;
    let req = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n\r\n",
        run.target.endpoint.path,
        run.target.host_header()
    );
    let reset = |e: std::io::Error| Failure::Connect(crate::http::io_class(&e));
    io.write_all(req.as_bytes()).await.map_err(reset)?;
    let mut buf = Vec::with_capacity(4096);
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut resp = httparse::Response::new(&mut headers);
        match resp.parse(&buf) {
            Ok(httparse::Status::Complete(n)) => {
                let code = resp.code.unwrap_or(0);
                if code != 200 {
                    return Err(Failure::Status(code));
                }
                let header = |name: &str| {
                    (resp.headers.iter())
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .map(|h| String::from_utf8_lossy(h.value).to_ascii_lowercase())
                };
                let kind = header("content-type").unwrap_or_default();
                if !kind.starts_with("text/event-stream") {
                    return Err(Failure::NotEventStream);
                }
                let chunked = header("transfer-encoding").is_some_and(|t| t.contains("chunked"));
                let body = Body {
                    chunked: chunked.then(Chunked::default),
                    rest: buf[n..].to_vec(),
                };
                return Ok((io, body));
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => {}
            _ => return Err(Failure::Handshake),
        }
        let mut chunk = [0u8; 4096];
        let n = io.read(&mut chunk).await.map_err(reset)?;
        if n == 0 {
            return Err(Failure::Connect(iolab_model::attack::ErrorClass::Reset));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Read events until the hold ends (`held`), the stream ends or breaks,
/// or the run is stopped.
async fn read_events(run: &Run, mut io: Box<dyn Io>, mut body: Body) -> (Ending, Tally) {
    let hold_end = instant_of(now_ns() + run.plan.hold.as_nanos() as u64);
    let mut events = Events::new(run);
    if let Err(ending) = events.feed_body(&mut body, &[]) {
        return (ending, events.tally);
    }
    let mut stop = run.stop.subscribe();
    let mut buf = vec![0u8; 16 << 10];
    // Made once, not on every turn of the loop (a turn per read).
    let hold = tokio::time::sleep_until(hold_end);
    let stopped = Run::stopped(&mut stop);
    tokio::pin!(hold, stopped);
    loop {
        tokio::select! {
            biased;
            read = io.read(&mut buf) => {
                let n = match read {
                    Ok(0) if events.parser.pending() => return (Ending::Broken("truncated"), events.tally),
                    Ok(0) => return (Ending::Broken("eof"), events.tally),
                    Ok(n) => n,
                    Err(_) => return (Ending::Broken("reset"), events.tally),
                };
                if let Err(ending) = events.feed_body(&mut body, &buf[..n]) {
                    return (ending, events.tally);
                }
            }
            _ = &mut hold => return (Ending::Held, events.tally),
            _ = &mut stopped => return (Ending::OpenAtEnd, events.tally),
        }
    }
}

/// A connection's events: the parser and what they came to.
struct Events<'a> {
    run: &'a Run,
    parser: Parser,
    last_id: Option<u64>,
    tally: Tally,
}

impl<'a> Events<'a> {
    fn new(run: &'a Run) -> Self {
        Events {
            run,
            parser: Parser::default(),
            last_id: None,
            tally: Tally::default(),
        }
    }

    /// Take body bytes (after the head's leftovers), unchunking if need be.
    fn feed_body(&mut self, body: &mut Body, bytes: &[u8]) -> Result<(), Ending> {
        let rest = std::mem::take(&mut body.rest);
        for piece in [&rest[..], bytes] {
            let mut data = Vec::new();
            let framing = match &mut body.chunked {
                None => {
                    data.extend_from_slice(piece);
                    Ok(None)
                }
                Some(c) => c.feed_with(piece, &mut |d| data.extend_from_slice(d)),
            };
            // The events before the body's end (or a bad chunk) count:
            // the last chunk often arrives in the same read as them (r52_1).
            let mut seen = Vec::new();
            let parsed = self.parser.feed(&data, &mut |e| seen.push(e));
            for e in seen {
                self.event(e);
            }
            parsed?;
            match framing {
                Ok(None) => {}
                Ok(Some(_)) if self.parser.pending() => return Err(Ending::Broken("truncated")),
                Ok(Some(_)) => return Err(Ending::Broken("eof")),
                Err(_) => return Err(Ending::Broken("malformed")),
            }
        }
        Ok(())
    }

    /// Count one event by its id and time it by its stamp.
    fn event(&mut self, e: Event) {
        match (e.id, self.last_id) {
            (Some(id), Some(last)) if id <= last => return,
            (Some(id), Some(last)) => {
                self.tally.lost += id - last - 1;
                self.tally.sent += id - last;
            }
            _ => self.tally.sent += 1,
        }
        if e.id.is_some() {
            self.last_id = e.id;
        }
        self.tally.answered += 1;
        if let Some(stamp) = sent_unix_us(&e.data) {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_micros() as u64);
            let us = now.saturating_sub(stamp).max(1);
            if us > self.run.plan.timeout.as_micros() as u64 {
                self.tally.late += 1;
            }
            self.run.books.borrow_mut().messages.saturating_record(us);
        }
    }
}

/// The `sent_unix_us` of an event's JSON data, if it has one.
pub fn sent_unix_us(data: &str) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_str(data).ok()?;
    v.get("sent_unix_us")?.as_u64()
}

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Its `id:`, when a number.
    pub id: Option<u64>,
    /// Its `data:` lines joined by LF.
    pub data: String,
}

/// The event-stream grammar (WHATWG HTML, 9.2.6), bounded.
#[derive(Debug, Default)]
pub struct Parser {
    line: Vec<u8>,
    after_cr: bool,
    id: Option<u64>,
    data: String,
    has_data: bool,
    size: usize,
}

impl Parser {
    /// Some of an event or a line is waiting for its end.
    pub fn pending(&self) -> bool {
        !self.line.is_empty() || self.has_data
    }

    /// Feed bytes; each complete event goes to `out`. `Err` (`oversize`)
    /// once an event or a line outgrows [`MAX_EVENT`].
    pub fn feed(&mut self, bytes: &[u8], out: &mut impl FnMut(Event)) -> Result<(), Ending> {
        for &b in bytes {
            let after_cr = std::mem::take(&mut self.after_cr);
            match b {
                b'\n' if after_cr => {}
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    self.line_end(out);
                }
                _ => {
                    self.line.push(b);
                    self.size += 1;
                    if self.size > MAX_EVENT {
                        return Err(Ending::Broken("oversize"));
                    }
                }
            }
        }
        Ok(())
    }

    fn line_end(&mut self, out: &mut impl FnMut(Event)) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            if self.has_data {
                out(Event {
                    id: self.id,
                    data: std::mem::take(&mut self.data),
                });
            }
            (self.has_data, self.size) = (false, 0);
            return;
        }
        let text = String::from_utf8_lossy(&line);
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (&*text, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "id" => self.id = value.trim().parse().ok(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]]) -> (Vec<Event>, Result<(), Ending>) {
        let mut p = Parser::default();
        let mut got = Vec::new();
        for c in chunks {
            if let Err(e) = p.feed(c, &mut |e| got.push(e)) {
                return (got, Err(e));
            }
        }
        (got, Ok(()))
    }

    #[test]
    fn events_split_anywhere_and_any_line_end_parse_the_same() {
        let (a, _) =
            parse(&[b"id: 1\r\ndata: {\"x\":1}\r\n\r\nid: 2\rdata: b\r\rid:3\ndata:c\ndata:d\n\n"]);
        let (b, _) = parse(&[
            b"id: 1\r",
            b"\ndata: {\"x\":1}\r\n\r",
            b"\nid: 2\rdata: b\r\rid:3\ndata:c\nda",
            b"ta:d\n\n",
        ]);
        assert_eq!(a, b);
        assert_eq!(a.len(), 3);
        assert_eq!((a[1].id, a[2].data.as_str()), (Some(2), "c\nd"));
    }

    #[test]
    fn a_line_that_never_ends_stops_at_the_cap() {
        let big = vec![b'x'; MAX_EVENT + 1];
        let (got, r) = parse(&[b"data: ", &big]);
        assert!(got.is_empty());
        assert_eq!(r, Err(Ending::Broken("oversize")));
    }
}
