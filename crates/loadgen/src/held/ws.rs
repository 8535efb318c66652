//! One WebSocket connection's life: handshake (bounded by the timeout from
//! its intended open time), then for `--hold` a message every
//! `1 / --message-rate` carrying its sequence number (`"<seq> <text>"`),
//! each echo timed from its intended send time; a ping after every
//! timeout in which the server sent nothing (a server that never answers
//! one is `no_pong`; echoes already show a busy connection alive, and a
//! ping and pong every timeout on each were a sixth more frames at one
//! message a second and a 5 s timeout); at the end a wait of
//! one timeout for the last echoes, then our close (code 1000) and a
//! bounded wait for the server's.
//!
//! Framing, masking and the close handshake are tokio-tungstenite's.

use std::collections::VecDeque;
use std::rc::Rc;

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::protocol::{
    frame::coding::CloseCode, CloseFrame, WebSocketConfig,
};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;

use super::account::{Ending, Failure, Tally};
use super::conn::Io;
use super::{instant_of, Run, CLOSE_GRACE};
use crate::clock::now_ns;

/// Each connection's read buffer (it grows for a bigger frame). tungstenite
/// zero-fills the whole buffer before every read attempt (`FrameCodec::
/// read_in`), so its size is paid in memset per poll and in resident memory
/// per connection: 16 KiB was 6% of the generator's CPU and ~320 MiB of
/// its RSS at 20,000 connections; messages here are small.
const READ_BUFFER: usize = 4 << 10;
/// Largest message or frame accepted from the server (a bigger one ends
/// the connection as `oversize`, not the generator's memory).
const MAX_FRAME: usize = 4 << 20;

type Ws = WebSocketStream<Box<dyn Io>>;

/// Open connection `at` (run-clock ns), hold it, close it, and book it.
pub async fn hold(run: Rc<Run>, at: u64) {
    {
        let mut books = run.books.borrow_mut();
        books.late_by(now_ns().saturating_sub(at));
        books.attempted();
    }
    let deadline = at + run.plan.timeout.as_nanos() as u64;
    let opened = tokio::time::timeout_at(instant_of(deadline), handshake(&run)).await;
    let latency_us = now_ns().saturating_sub(at) / 1_000;
    let ws = match opened {
        Ok(Ok(ws)) => ws,
        Ok(Err(why)) => return run.books.borrow_mut().failed(&why, latency_us),
        Err(_) => return run.books.borrow_mut().failed(&Failure::Timeout, latency_us),
    };
    run.books.borrow_mut().established(101, latency_us);
    let (ending, tally) = Session::new(&run).run(ws).await;
    run.books.borrow_mut().ended(&ending, &tally);
}

async fn handshake(run: &Run) -> Result<Ws, Failure> {
    let io = run.target.connect().await?;
    // tungstenite's default read buffer is 128 KiB a connection, allocated
    // up front: 128 MB for 1,000 held connections, which would be charged
    // to the model (or the generator) rather than to holding them.
    let config = WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER)
        .max_message_size(Some(MAX_FRAME))
        .max_frame_size(Some(MAX_FRAME));
    let url = run.target.url.as_str();
    match tokio_tungstenite::client_async_with_config(url, io, Some(config)).await {
        Ok((ws, _)) => Ok(ws),
        Err(WsError::Http(resp)) => Err(Failure::Status(resp.status().as_u16())),
        Err(WsError::Io(e)) => Err(Failure::Connect(crate::http::io_class(&e))),
        Err(_) => Err(Failure::Handshake),
    }
}

/// The sending side's schedule and the messages awaiting their echo.
struct Session<'a> {
    run: &'a Run,
    gap_ns: Option<u64>,
    timeout_ns: u64,
    seq: u64,
    /// `(seq, intended_ns)` of messages sent and not yet echoed, in order.
    outstanding: VecDeque<(u64, u64)>,
    tally: Tally,
    /// A frame arrived since the last ping tick: the server is alive.
    heard: bool,
}

impl<'a> Session<'a> {
    fn new(run: &'a Run) -> Self {
        let rate = run.plan.message_rate;
        Session {
            run,
            gap_ns: (rate > 0.0).then(|| (1e9 / rate) as u64),
            timeout_ns: run.plan.timeout.as_nanos() as u64,
            seq: 0,
            outstanding: VecDeque::new(),
            tally: Tally::default(),
            heard: false,
        }
    }

    /// Hold the connection until its hold ends, the server ends it, or
    /// the run is stopped.
    async fn run(mut self, mut ws: Ws) -> (Ending, Tally) {
        let start = now_ns();
        let hold_end = start + self.run.plan.hold.as_nanos() as u64;
        let mut next_send = self.gap_ns.map(|g| start + g);
        let mut ping = tokio::time::interval(self.run.plan.timeout);
        // A tick missed while a send waited must not fire at once and take
        // the pong still on its way for a missing one.
        ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ping.tick().await;
        let mut awaiting_pong = false;
        let mut stop = self.run.stop.subscribe();
        let run: &'a Run = self.run;
        let sending = |t: Option<u64>| t.is_some_and(|t| t < hold_end);
        // Kept across turns of the loop, not made anew on each (a turn per
        // send and per echo): one place in the run's timers per send, one
        // tokio timer for the hold, one wait for the stop.
        let mut send_sleep = Box::pin(run.timers.sleep_until(next_send.unwrap_or(hold_end)));
        let hold_sleep = tokio::time::sleep_until(instant_of(hold_end));
        tokio::pin!(hold_sleep);
        let stopped = Run::stopped(&mut stop);
        tokio::pin!(stopped);
        loop {
            tokio::select! {
                biased;
                msg = ws.next() => {
                    if let Some(ending) = self.on_frame(msg) {
                        return self.broke(ending);
                    }
                }
                _ = &mut send_sleep, if sending(next_send) => {
                    let intended = next_send.unwrap_or(hold_end);
                    if let Err(ending) = self.send(&mut ws, intended).await {
                        return self.broke(ending);
                    }
                    next_send = self.gap_ns.map(|g| intended + g);
                    send_sleep = Box::pin(run.timers.sleep_until(next_send.unwrap_or(hold_end)));
                }
                _ = &mut hold_sleep => {
                    return self.finish(ws).await;
                }
                _ = ping.tick() => {
                    if std::mem::take(&mut self.heard) {
                        awaiting_pong = false;
                    } else if awaiting_pong {
                        return self.broke(Ending::Broken("no_pong"));
                    } else {
                        awaiting_pong = true;
                        let ping = ws.send(Message::Ping(Vec::new().into()));
                        match tokio::time::timeout(self.run.plan.timeout, ping).await {
                            Ok(Ok(())) => {}
                            Ok(Err(e)) => return self.broke(Ending::Broken(class(&e))),
                            Err(_) => return self.broke(Ending::Broken("stalled")),
                        }
                    }
                }
                _ = &mut stopped => {
                    self.tally.in_flight = self.outstanding.len() as u64;
                    let _ = tokio::time::timeout(CLOSE_GRACE, ws.close(None)).await;
                    return (Ending::OpenAtEnd, self.tally);
                }
            }
        }
    }

    /// Send message `seq` due at `intended`; a socket that will not take it
    /// within the timeout is `stalled`.
    async fn send(&mut self, ws: &mut Ws, intended: u64) -> Result<(), Ending> {
        let late = now_ns().saturating_sub(intended);
        self.run.books.borrow_mut().message_late_by(late);
        if late > self.gap_ns.unwrap_or(u64::MAX) {
            self.tally.behind += 1;
        }
        let text = format!("{} {}", self.seq, self.run.plan.message);
        let sent = tokio::time::timeout(self.run.plan.timeout, ws.send(Message::text(text))).await;
        match sent {
            Ok(Ok(())) => {
                self.outstanding.push_back((self.seq, intended));
                self.tally.sent += 1;
                self.seq += 1;
                Ok(())
            }
            // A send that failed or stalled never left for sure: not counted.
            Ok(Err(e)) => Err(Ending::Broken(class(&e))),
            Err(_) => Err(Ending::Broken("stalled")),
        }
    }

    /// One frame from the server; `Some` when it ended the connection.
    fn on_frame(&mut self, msg: Option<Result<Message, WsError>>) -> Option<Ending> {
        self.heard |= matches!(msg, Some(Ok(_)));
        match msg {
            None => Some(Ending::Broken("eof")),
            Some(Err(e)) => Some(Ending::Broken(class(&e))),
            Some(Ok(Message::Close(frame))) => Some(close_ending(frame)),
            Some(Ok(Message::Text(t))) => {
                self.echoed(t.as_str());
                None
            }
            Some(Ok(_)) => None,
        }
    }

    /// An echo: messages before its sequence number are lost, its own is
    /// answered and timed from its intended send.
    fn echoed(&mut self, text: &str) {
        let Some(seq) = text.split(' ').next().and_then(|s| s.parse::<u64>().ok()) else {
            return;
        };
        while let Some(&(s, intended)) = self.outstanding.front() {
            if s > seq {
                break;
            }
            self.outstanding.pop_front();
            if s < seq {
                self.tally.lost += 1;
                continue;
            }
            let ns = now_ns().saturating_sub(intended);
            self.tally.answered += 1;
            if ns > self.timeout_ns {
                self.tally.late += 1;
            }
            (self.run.books.borrow_mut().messages).saturating_record((ns / 1_000).max(1));
        }
    }

    /// The server ended it: what was outstanding is lost.
    fn broke(mut self, ending: Ending) -> (Ending, Tally) {
        self.tally.lost += self.outstanding.len() as u64;
        (ending, self.tally)
    }

    /// The hold is over: wait up to one timeout for the last echoes, then
    /// close (1000) and wait up to [`CLOSE_GRACE`] for the server's close.
    async fn finish(mut self, mut ws: Ws) -> (Ending, Tally) {
        let grace = instant_of(now_ns() + self.timeout_ns);
        while !self.outstanding.is_empty() {
            match tokio::time::timeout_at(grace, ws.next()).await {
                Err(_) => break,
                Ok(msg) => {
                    if let Some(ending) = self.on_frame(msg) {
                        return self.broke(ending);
                    }
                }
            }
        }
        self.tally.in_flight = self.outstanding.len() as u64;
        let bye = CloseFrame {
            code: CloseCode::Normal,
            reason: "hold over".into(),
        };
        let _ = tokio::time::timeout(CLOSE_GRACE, ws.close(Some(bye))).await;
        let drain = async { while let Some(Ok(_)) = ws.next().await {} };
        let _ = tokio::time::timeout(CLOSE_GRACE, drain).await;
        (Ending::Held, self.tally)
    }
}

/// How a server's close frame ends a connection. tungstenite hands a code
/// no endpoint may send (1005, 1006, 1015, reserved or out of range; it
/// counts 1014 among them) on as its own reply, 1002 "Protocol violation":
/// that is the server's fault, not a 1002 it sent (r52_3).
fn close_ending(frame: Option<CloseFrame>) -> Ending {
    match frame {
        Some(f) if f.code == CloseCode::Protocol && f.reason.as_str() == "Protocol violation" => {
            Ending::Broken("bad_close_code")
        }
        f => Ending::ClosedByServer(f.map(|f| u16::from(f.code))),
    }
}

/// The class of an error on an established connection.
fn class(e: &WsError) -> &'static str {
    match e {
        WsError::Capacity(_) => "oversize",
        WsError::Protocol(_) | WsError::Utf8(_) => "malformed",
        _ => "reset",
    }
}
