//! gRPC streaming calls held as held connections (`--call` on a
//! server-streaming or bidirectional method with `--hold`): one call per
//! HTTP/2 connection (the `h2` framing the unary path uses), opened on the
//! held run's schedule and booked in its [`Books`](crate::held::account::Books).
//!
//! A call opens with its `--data` message, intended at the call's open
//! time; a server-streaming call then half-closes and counts every message
//! pushed, a bidirectional one sends the message again every
//! `1 / --message-rate` and times each reply from its intended send (in
//! order, or by a `seq` field both messages have). A pushed message with a
//! `sent_unix_us` field is timed from it (one host's wall clock, as the
//! contract's `/events`); its `seq` field numbers it, so gaps are lost.
//! Established is the server's response head (grpcio sends it with its
//! first message); a trailers-only answer with a status is a refusal by
//! that status; a status at the end closes the call by its code. At the
//! end of `--hold` the call is cancelled (RST_STREAM CANCEL). Here: a
//! call's life; [`call`]: the call made ready before the run.

mod call;

use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use h2::client::SendRequest;
use h2::{Reason, RecvStream, SendStream};
use http::HeaderMap;
use prost_reflect::{DynamicMessage, FieldDescriptor};

use crate::clock::now_ns;
use crate::h2::answer::MAX_GRPC_MESSAGE;
use crate::held::account::{Ending, Failure, Tally};
use crate::held::{instant_of, Run, CLOSE_GRACE};
use call::read_u64;

pub use call::{check, Call};

/// An open call: its connection, its two halves and the server's head.
struct Open {
    conn: SendRequest<Bytes>,
    driver: tokio::task::JoinHandle<()>,
    send: SendStream<Bytes>,
    body: RecvStream,
    head: HeaderMap,
}

/// Start call `at` (run-clock ns), hold it, cancel it, and book it.
pub async fn hold(run: Rc<Run>, at: u64) {
    {
        let mut books = run.books.borrow_mut();
        books.late_by(now_ns().saturating_sub(at));
        books.attempted();
    }
    let call = run.call.as_ref().expect("a gRPC run has its call");
    let deadline = at + run.plan.timeout.as_nanos() as u64;
    let mut session = Session::new(&run, call);
    let opened = tokio::time::timeout_at(instant_of(deadline), session.open(at)).await;
    let latency_us = now_ns().saturating_sub(at) / 1_000;
    let open = match opened {
        Ok(Ok(open)) => open,
        Ok(Err(why)) => return run.books.borrow_mut().failed(&why, latency_us),
        Err(_) => return run.books.borrow_mut().failed(&Failure::Timeout, latency_us),
    };
    run.books.borrow_mut().established(200, latency_us);
    let Open {
        conn,
        driver,
        mut send,
        body,
        head,
    } = open;
    let (ending, tally) = session.run(&mut send, body, &head, at).await;
    // Cancelled if still open (a no-op on a stream the server ended),
    // then the connection closed, its GOAWAY given a bounded wait.
    send.send_reset(Reason::CANCEL);
    drop((send, conn));
    let abort = driver.abort_handle();
    if tokio::time::timeout(CLOSE_GRACE, driver).await.is_err() {
        abort.abort();
    }
    run.books.borrow_mut().ended(&ending, &tally);
}

/// One call's messages: the sending schedule, the replies awaited, the
/// bytes of a message still arriving.
struct Session<'a> {
    run: &'a Run,
    call: &'a Call,
    gap_ns: Option<u64>,
    timeout_ns: u64,
    seq: u64,
    /// `(seq, intended_ns)` of messages sent and not yet answered, in order.
    outstanding: VecDeque<(u64, u64)>,
    /// Server-streaming: the last `seq` pushed.
    last_seq: Option<u64>,
    buf: Vec<u8>,
    tally: Tally,
}

impl<'a> Session<'a> {
    fn new(run: &'a Run, call: &'a Call) -> Self {
        let rate = run.plan.message_rate;
        Session {
            run,
            call,
            gap_ns: (call.bidi && rate > 0.0).then(|| (1e9 / rate) as u64),
            timeout_ns: run.plan.timeout.as_nanos() as u64,
            seq: 0,
            outstanding: VecDeque::new(),
            last_seq: None,
            buf: Vec::new(),
            tally: Tally::default(),
        }
    }

    /// Connect, send the call's head and first message (intended `at`),
    /// and wait for the server's head.
    async fn open(&mut self, at: u64) -> Result<Open, Failure> {
        let addr = self.run.target.addr;
        let addr = addr.ok_or(Failure::Connect(
            iolab_model::attack::ErrorClass::ConnectOther,
        ))?;
        let (conn, driver, _) = crate::h2::conn::open(addr, None, self.run.target.tls())
            .await
            .map_err(Failure::Connect)?;
        let driver = tokio::task::spawn_local(async move {
            let _ = driver.await;
        });
        // Past the connect, an h2 error is the stream's or the
        // connection's end before the head, not a failed connect (r52_10).
        let h2_fail = |e: h2::Error| Failure::Reset(crate::h2::classify::class(&e));
        let mut conn = conn.ready().await.map_err(h2_fail)?;
        let (answer, mut send) = conn
            .send_request(self.call.head.request(), false)
            .map_err(h2_fail)?;
        self.send(&mut send, at).map_err(h2_fail)?;
        let answer = answer.await.map_err(h2_fail)?;
        let (parts, body) = answer.into_parts();
        if parts.status != http::StatusCode::OK {
            return Err(Failure::Status(parts.status.as_u16()));
        }
        let grpc = parts
            .headers
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"));
        if !grpc {
            return Err(Failure::Handshake);
        }
        match status(&parts.headers) {
            Some(code) if code != 0 && body.is_end_stream() => Err(Failure::GrpcStatus(code)),
            _ => Ok(Open {
                conn,
                driver,
                send,
                body,
                head: parts.headers,
            }),
        }
    }

    /// Send message `seq` due at `intended` (half-closing after the one
    /// message of a server-streaming call).
    fn send(&mut self, send: &mut SendStream<Bytes>, intended: u64) -> Result<(), h2::Error> {
        let late = now_ns().saturating_sub(intended);
        if self.seq > 0 {
            self.run.books.borrow_mut().message_late_by(late);
        }
        if late > self.gap_ns.unwrap_or(u64::MAX) {
            self.tally.behind += 1;
        }
        send.send_data(self.call.framed(self.seq), !self.call.bidi)?;
        if self.call.bidi {
            self.outstanding.push_back((self.seq, intended));
            self.tally.sent += 1;
        }
        self.seq += 1;
        Ok(())
    }

    /// Hold the call until its hold ends, the server ends it, or the run
    /// is stopped.
    async fn run(
        mut self,
        send: &mut SendStream<Bytes>,
        mut body: RecvStream,
        head: &HeaderMap,
        at: u64,
    ) -> (Ending, Tally) {
        let hold_end = now_ns() + self.run.plan.hold.as_nanos() as u64;
        // Message 0 left at open, intended at the call's open time `at`.
        let mut next_send = self.gap_ns.map(|g| at + g);
        let mut stop = self.run.stop.subscribe();
        let run: &'a Run = self.run;
        let sending = |t: Option<u64>| t.is_some_and(|t| t < hold_end);
        let mut send_sleep = Box::pin(run.timers.sleep_until(next_send.unwrap_or(hold_end)));
        // Made once, not on every turn of the loop (a turn per message).
        let hold = tokio::time::sleep_until(instant_of(hold_end));
        let stopped = Run::stopped(&mut stop);
        tokio::pin!(hold, stopped);
        loop {
            tokio::select! {
                biased;
                chunk = body.data() => match self.on_data(&mut body, chunk) {
                    Ok(true) => {}
                    Ok(false) => return self.ended(&mut body, head).await,
                    Err(ending) => return self.broke(ending),
                },
                _ = &mut send_sleep, if sending(next_send) => {
                    let intended = next_send.unwrap_or(hold_end);
                    if let Err(e) = self.send(send, intended) {
                        return self.broke(Ending::Broken(class(&e)));
                    }
                    next_send = self.gap_ns.map(|g| intended + g);
                    send_sleep = Box::pin(run.timers.sleep_until(next_send.unwrap_or(hold_end)));
                }
                _ = &mut hold => return self.finish(&mut body, head).await,
                _ = &mut stopped => {
                    self.tally.in_flight = self.outstanding.len() as u64;
                    return (Ending::OpenAtEnd, self.tally);
                }
            }
        }
    }

    /// Bytes from the server: `Ok(false)` when its messages ended.
    fn on_data(
        &mut self,
        body: &mut RecvStream,
        chunk: Option<Result<Bytes, h2::Error>>,
    ) -> Result<bool, Ending> {
        let bytes = match chunk {
            None => return Ok(false),
            Some(Err(e)) => return Err(Ending::Broken(class(&e))),
            Some(Ok(b)) => b,
        };
        let _ = body.flow_control().release_capacity(bytes.len());
        self.buf.extend_from_slice(&bytes);
        let mut at = 0;
        while self.buf.len() - at >= 5 {
            let p = &self.buf[at..];
            let len = u32::from_be_bytes([p[1], p[2], p[3], p[4]]);
            if p[0] != 0 {
                return Err(Ending::Broken("malformed"));
            }
            if len > MAX_GRPC_MESSAGE {
                return Err(Ending::Broken("oversize"));
            }
            let end = 5 + len as usize;
            if p.len() < end {
                break;
            }
            let msg = self.buf[at + 5..at + end].to_vec();
            self.on_message(&msg);
            at += end;
        }
        self.buf.drain(..at);
        Ok(true)
    }

    /// One message from the server, counted and timed.
    fn on_message(&mut self, bytes: &[u8]) {
        let call = self.call;
        let decoded = (call.seq_out.is_some() || call.stamp.is_some())
            .then(|| DynamicMessage::decode(call.output.clone(), bytes).ok())
            .flatten();
        let field = |f: &Option<FieldDescriptor>| {
            decoded
                .as_ref()
                .zip(f.as_ref())
                .and_then(|(m, f)| read_u64(m, f))
        };
        let seq = field(&call.seq_out);
        if call.bidi {
            return self.echoed(if call.seq_in.is_some() { seq } else { None });
        }
        match (seq, self.last_seq) {
            (Some(s), Some(last)) if s <= last => return,
            (Some(s), Some(last)) => {
                self.tally.lost += s - last - 1;
                self.tally.sent += s - last;
            }
            _ => self.tally.sent += 1,
        }
        self.last_seq = seq.or(self.last_seq);
        self.tally.answered += 1;
        if let Some(stamp) = field(&call.stamp) {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_micros() as u64);
            self.timed(now.saturating_sub(stamp).saturating_mul(1_000));
        }
    }

    /// A bidirectional reply: numbered, the ones before it are lost;
    /// unnumbered, it answers the oldest message outstanding.
    fn echoed(&mut self, seq: Option<u64>) {
        while let Some(&(s, intended)) = self.outstanding.front() {
            if seq.is_some_and(|seq| s > seq) {
                return;
            }
            self.outstanding.pop_front();
            if seq.is_some_and(|seq| s < seq) {
                self.tally.lost += 1;
                continue;
            }
            self.tally.answered += 1;
            return self.timed(now_ns().saturating_sub(intended));
        }
    }

    fn timed(&mut self, ns: u64) {
        if ns > self.timeout_ns {
            self.tally.late += 1;
        }
        (self.run.books.borrow_mut().messages).saturating_record((ns / 1_000).max(1));
    }

    /// The server ended its messages: its status, in the trailers (or the
    /// head), closes the call by code; none is `no_status`.
    async fn ended(self, body: &mut RecvStream, head: &HeaderMap) -> (Ending, Tally) {
        let trailers = tokio::time::timeout(self.run.plan.timeout, body.trailers()).await;
        let ending = match trailers {
            Ok(Ok(t)) => match t.as_ref().and_then(status).or_else(|| status(head)) {
                Some(code) => Ending::GrpcStatus(code),
                None => Ending::Broken("no_status"),
            },
            Ok(Err(e)) => Ending::Broken(class(&e)),
            Err(_) => Ending::Broken("stalled"),
        };
        self.broke(ending)
    }

    /// The call ended: what was outstanding is lost.
    fn broke(mut self, ending: Ending) -> (Ending, Tally) {
        self.tally.lost += self.outstanding.len() as u64;
        (ending, self.tally)
    }

    /// The hold is over: a bidirectional call waits up to one timeout for
    /// its last replies; what is still outstanding is in flight.
    async fn finish(mut self, body: &mut RecvStream, head: &HeaderMap) -> (Ending, Tally) {
        let grace = instant_of(now_ns() + self.timeout_ns);
        while !self.outstanding.is_empty() {
            match tokio::time::timeout_at(grace, body.data()).await {
                Err(_) => break,
                Ok(chunk) => match self.on_data(body, chunk) {
                    Ok(true) => {}
                    Ok(false) => return self.ended(body, head).await,
                    Err(ending) => return self.broke(ending),
                },
            }
        }
        self.tally.in_flight = self.outstanding.len() as u64;
        (Ending::Held, self.tally)
    }
}

/// A head's or trailers' `grpc-status`.
fn status(h: &HeaderMap) -> Option<u32> {
    h.get("grpc-status")?.to_str().ok()?.trim().parse().ok()
}

/// How an `h2` error ends an established call.
fn class(e: &h2::Error) -> &'static str {
    match e.is_go_away() {
        true => "goaway",
        false => "reset",
    }
}
