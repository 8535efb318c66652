//! The contract's held connections, checked on a running target
//! (`iolab verify URL --held`): `GET /ws` answers the upgrade with 101; each
//! text message on `/ws?steps=sleep:50` comes back unchanged after at least
//! the step's 50 ms (so the steps ran per message, not once per
//! connection); `GET /events?every=50ms` is a `text/event-stream` whose
//! events carry `id:` 1, 2, 3... and data `{"seq":N,"sent_unix_us":T}`
//! with a wall clock this host agrees with, written about `every` apart.
//!
//! Blocking and bounded like the rest of verify: every read has the
//! [`Budget`]'s deadline and wakes every [`TICK`] to look at Ctrl-C. The
//! event grammar is the generator's ([`iolab_loadgen::held::EventParser`]),
//! so verify and attack cannot read an event two ways; framing is
//! `tungstenite`'s, as on the generator and the built-in servers.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use iolab_loadgen::held::{sent_unix_us, Event, EventParser};
use iolab_loadgen::response::Chunked;
use iolab_model::verify::Check;
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

use crate::client::{Endpoint, Limits};
// The check's figures live beside the faults that name them.
use crate::fault::{Awaited, HeldFault};
pub use crate::fault::{ECHOES, ECHO_MIN_MS, ECHO_STEPS, EVENTS, EVERY_MS};
use crate::vectors::MIN_SLACK_MS;
use crate::{fail, pass, Budget, VerifyError, VerifyOptions};

/// How far a server's `sent_unix_us` may be from this host's clock (one
/// host: only scheduling separates the two clocks' readings).
pub const CLOCK_SLACK: Duration = Duration::from_secs(5);
/// How often a blocked read looks at Ctrl-C.
const TICK: Duration = Duration::from_millis(100);
/// Largest frame taken from the target.
const MAX_FRAME: usize = 1 << 20;

/// The held checks' names, in the order they run.
pub const HELD_CHECKS: [&str; 3] = ["ws-handshake", "ws-echo-steps", "events-stream"];

/// Check `/ws` and `/events` at `base_url`; each fault is a failed check.
pub fn verify_held(base_url: &str, opts: &VerifyOptions) -> Result<Vec<Check>, VerifyError> {
    let target = Endpoint::parse(base_url)?;
    let budget = Budget::start(opts);
    let [handshake, echo, events] = HELD_CHECKS;
    let mut checks = Vec::new();
    let handshook = budget.next().map_err(HeldFault::from).and_then(|l| {
        let (_, ms) = open_ws(&target, "/ws", &l)?;
        Ok(format!("101 Switching Protocols in {ms:.1} ms"))
    });
    checks.push(judged(handshake, handshook));
    let echoed = (budget.next().map_err(HeldFault::from)).and_then(|l| echo_check(&target, &l));
    checks.push(judged(echo, echoed));
    let streamed = (budget.next().map_err(HeldFault::from)).and_then(|l| events_check(&target, &l));
    checks.push(judged(events, streamed));
    Ok(checks)
}

/// A check passed with its detail, or failed with its fault.
fn judged(name: &str, got: Result<String, HeldFault>) -> Check {
    match got {
        Ok(d) => pass(name, d),
        Err(e) => fail(name, e.to_string()),
    }
}

/// A read limited by a deadline and Ctrl-C.
struct Clock {
    end: Instant,
    limits: Limits,
}

impl Clock {
    fn new(limits: &Limits) -> Clock {
        Clock {
            end: Instant::now() + limits.deadline,
            limits: limits.clone(),
        }
    }

    /// `Err` once past the deadline or interrupted.
    fn tick(&self, what: Awaited) -> Result<(), HeldFault> {
        if (self.limits.cancel.as_ref())
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
        {
            return Err(HeldFault::Interrupted);
        }
        if Instant::now() >= self.end {
            return Err(HeldFault::Late {
                what,
                within: self.limits.deadline,
            });
        }
        Ok(())
    }
}

fn connect(target: &Endpoint, limits: &Limits) -> Result<TcpStream, HeldFault> {
    let stream =
        TcpStream::connect_timeout(&target.addr, limits.connect).map_err(HeldFault::Connect)?;
    stream
        .set_read_timeout(Some(TICK))
        .and_then(|()| stream.set_write_timeout(Some(limits.deadline)))
        .map_err(HeldFault::Socket)?;
    Ok(stream)
}

/// Open `path` as a WebSocket: the socket and the handshake's ms.
fn open_ws(
    target: &Endpoint,
    path: &str,
    limits: &Limits,
) -> Result<(WebSocket<TcpStream>, f64), HeldFault> {
    let t = Instant::now();
    let stream = connect(target, limits)?;
    // The handshake reads with the deadline itself (it is one short answer).
    let _ = stream.set_read_timeout(Some(limits.deadline));
    let url = format!("ws://{}{}{path}", target.host, target.base);
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_FRAME))
        .max_frame_size(Some(MAX_FRAME));
    let (ws, _) = tungstenite::client::client_with_config(url.as_str(), stream, Some(config))
        .map_err(|e| {
            let path = path.to_string();
            match e {
                tungstenite::HandshakeError::Failure(tungstenite::Error::Http(resp)) => {
                    HeldFault::UpgradeStatus {
                        path,
                        status: resp.status().as_u16(),
                    }
                }
                tungstenite::HandshakeError::Failure(why) => HeldFault::Handshake { path, why },
                tungstenite::HandshakeError::Interrupted(_) => HeldFault::HandshakeStalled { path },
            }
        })?;
    let _ = ws.get_ref().set_read_timeout(Some(TICK));
    Ok((ws, t.elapsed().as_secs_f64() * 1e3))
}

/// Each message on `/ws?steps=sleep:50` echoed unchanged, after the step.
fn echo_check(target: &Endpoint, limits: &Limits) -> Result<String, HeldFault> {
    let (mut ws, _) = open_ws(target, &format!("/ws?steps={ECHO_STEPS}"), limits)?;
    let clock = Clock::new(limits);
    let mut took = Vec::new();
    for seq in 1..=ECHOES {
        let text = format!("{seq} iolab verify");
        let t = Instant::now();
        ws.send(Message::text(text.clone()))
            .map_err(|why| HeldFault::NotSent { seq, why })?;
        let got = read_text(&mut ws, &clock, seq)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if got != text {
            return Err(HeldFault::Changed {
                seq,
                sent: text,
                echoed: short(&got),
            });
        }
        if ms < ECHO_MIN_MS - MIN_SLACK_MS {
            return Err(HeldFault::EchoFast { seq, ms });
        }
        took.push(format!("{ms:.1}"));
    }
    let _ = ws.close(None);
    let _ = ws.flush();
    Ok(format!(
        "{ECHOES} messages echoed unchanged in {} ms (steps {ECHO_STEPS})",
        took.join(", ")
    ))
}

/// The next text message (pings are answered by tungstenite on the way).
fn read_text(ws: &mut WebSocket<TcpStream>, clock: &Clock, seq: u64) -> Result<String, HeldFault> {
    loop {
        clock.tick(Awaited::Echo(seq))?;
        match ws.read() {
            Ok(Message::Text(t)) => return Ok(t.as_str().to_string()),
            Ok(Message::Binary(_)) => return Err(HeldFault::Binary(seq)),
            Ok(Message::Close(f)) => {
                let code = f.map(|f| u16::from(f.code));
                return Err(HeldFault::Closed { seq, code });
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(why) => return Err(HeldFault::EchoRead { seq, why }),
        }
    }
}

/// `/events?every=50ms`: its head, then [`EVENTS`] events numbered from 1,
/// stamped with this host's clock, about the interval apart.
fn events_check(target: &Endpoint, limits: &Limits) -> Result<String, HeldFault> {
    let mut stream = connect(target, limits)?;
    let path = format!("{}/events?every={EVERY_MS}ms", target.base);
    let head = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\r\n",
        target.host
    );
    stream
        .write_all(head.as_bytes())
        .map_err(HeldFault::EventsNotSent)?;
    let clock = Clock::new(limits);
    let (status, head) = read_head(&mut stream, &clock)?;
    let content_type = head.content_type.unwrap_or_default();
    if status != 200 || !content_type.starts_with("text/event-stream") {
        return Err(HeldFault::NotStream {
            status,
            content_type,
        });
    }
    let mut chunked = head.chunked.then(Chunked::default);
    let mut parser = EventParser::default();
    let mut events: Vec<Event> = Vec::new();
    let mut feed = |bytes: &[u8], events: &mut Vec<Event>| -> Result<(), HeldFault> {
        let mut data = Vec::new();
        match &mut chunked {
            None => data.extend_from_slice(bytes),
            Some(c) => {
                c.feed_with(bytes, &mut |d| data.extend_from_slice(d))
                    .map_err(|e| HeldFault::Chunked(e.0))?;
            }
        }
        parser
            .feed(&data, &mut |e| events.push(e))
            .map_err(|_| HeldFault::EventTooBig)
    };
    feed(&head.rest, &mut events)?;
    let mut buf = [0u8; 4096];
    while (events.len() as u64) < EVENTS {
        clock.tick(Awaited::Events(events.len()))?;
        match stream.read(&mut buf) {
            Ok(0) => return Err(HeldFault::Ended(events.len())),
            Ok(n) => feed(&buf[..n], &mut events)?,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(why) => {
                let events = events.len();
                return Err(HeldFault::EventsRead { events, why });
            }
        }
    }
    judge_events(&events[..EVENTS as usize])
}

/// Ids 1, 2, 3 with `seq` equal to each, stamps near now and increasing
/// about [`EVERY_MS`] apart.
pub fn judge_events(events: &[Event]) -> Result<String, HeldFault> {
    let now_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    let mut stamps = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let want = i as u64 + 1;
        let seq = serde_json::from_str::<serde_json::Value>(&e.data)
            .ok()
            .and_then(|v| v.get("seq")?.as_u64());
        let stamp = sent_unix_us(&e.data);
        match (e.id, seq, stamp) {
            (Some(id), Some(s), Some(t)) if id == want && s == want => stamps.push(t),
            _ => {
                return Err(HeldFault::BadEvent {
                    want,
                    id: e.id,
                    data: short(&e.data),
                })
            }
        }
    }
    let slack = CLOCK_SLACK.as_micros() as u64;
    if let Some(t) = stamps.iter().find(|&&t| t.abs_diff(now_us) > slack) {
        return Err(HeldFault::Clock {
            stamp: *t,
            off_s: t.abs_diff(now_us) as f64 / 1e6,
        });
    }
    let gaps: Vec<f64> = stamps
        .windows(2)
        .map(|w| (w[1] as f64 - w[0] as f64) / 1e3)
        .collect();
    // Half the interval: a loop that fires a tick late catches up a little.
    if let Some(g) = gaps.iter().find(|&&g| g < EVERY_MS as f64 / 2.0) {
        return Err(HeldFault::TooClose {
            gap: *g,
            gaps: ms_list(&gaps),
        });
    }
    Ok(format!(
        "{} events, ids 1..{}, stamped {} ms apart (every={EVERY_MS}ms)",
        events.len(),
        events.len(),
        ms_list(&gaps)
    ))
}

fn ms_list(v: &[f64]) -> String {
    v.iter()
        .map(|g| format!("{g:.1}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `/events` answered in its head.
struct Head {
    content_type: Option<String>,
    chunked: bool,
    /// Body bytes read with the head.
    rest: Vec<u8>,
}

/// The status and head of the `/events` answer.
fn read_head(stream: &mut TcpStream, clock: &Clock) -> Result<(u16, Head), HeldFault> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        clock.tick(Awaited::EventsHead)?;
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut resp = httparse::Response::new(&mut headers);
            resp.parse(&got[..end + 4]).map_err(HeldFault::BadHead)?;
            let header = |name: &str| {
                (resp.headers.iter())
                    .find(|h| h.name.eq_ignore_ascii_case(name))
                    .map(|h| String::from_utf8_lossy(h.value).into_owned())
            };
            let head = Head {
                content_type: header("content-type"),
                chunked: header("transfer-encoding").is_some_and(|t| t.contains("chunked")),
                rest: got[end + 4..].to_vec(),
            };
            return Ok((resp.code.unwrap_or(0), head));
        }
        if got.len() > 64 << 10 {
            return Err(HeldFault::HeadTooBig);
        }
        match stream.read(&mut buf) {
            Ok(0) => return Err(HeldFault::HeadClosed),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => return Err(HeldFault::HeadRead(e)),
        }
    }
}

fn short(s: &str) -> String {
    crate::vectors::short_body(s)
}
