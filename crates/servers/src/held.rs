//! The contract's held connections, served by the thread models on the
//! thread that read the request (so one held connection costs a model what
//! it costs it: a thread for thread-per-request, a worker for the pool; the
//! event-loop models' twin is [`crate::held_async`]):
//!
//! - `GET /ws[?steps=...]`: a WebSocket (RFC 6455; framing by
//!   `tungstenite`) whose every text message is echoed, after running the
//!   request's steps when the URL has some (as `GET /work` would);
//! - `GET /events[?every=100ms]`: `text/event-stream`, an event every
//!   interval (default 1 s), `id:` its sequence number from 1 and its data
//!   `{"seq":N,"sent_unix_us":T}` (the wall clock when it was written).
//!
//! Both end on shutdown, on the client's close, or after [`IDLE`] without
//! a frame from a WebSocket client; nothing here can grow without bound
//! (frames are capped at [`MAX_FRAME`]).

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tungstenite::handshake::derive_accept_key;
use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

use crate::ctx::Ctx;
use crate::http1::{write_reply, Request};
use crate::routes::Reply;

/// A WebSocket client silent this long is closed (1001).
pub const IDLE: Duration = Duration::from_secs(60);
/// Largest frame or message taken from a client.
pub const MAX_FRAME: usize = 1 << 20;
/// Each WebSocket's read buffer (it grows for a bigger frame, up to [`MAX_FRAME`]).
pub const READ_BUFFER: usize = iolab_model::concurrency::held::WS_READ_BUFFER;
/// Shortest `/events` interval.
const MIN_EVERY: Duration = Duration::from_millis(1);
/// How often a held connection looks at shutdown.
const TICK: Duration = Duration::from_millis(200);

/// A held route of the contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// `GET /ws`: the `/work` target each message runs, if any.
    Ws {
        /// `/work?steps=...` when `/ws` had a query.
        work: Option<String>,
    },
    /// `GET /events`: an event every `every`.
    Events {
        /// The interval between events.
        every: Duration,
    },
}

/// The held route of a request, if it is one.
pub fn route(req: &Request) -> Option<Held> {
    if req.method != "GET" {
        return None;
    }
    let (path, query) = match req.target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (req.target.as_str(), None),
    };
    match path {
        "/ws" => Some(Held::Ws {
            work: query
                .filter(|q| !q.is_empty())
                .map(|q| format!("/work?{q}")),
        }),
        "/events" => {
            let every = (query.into_iter().flat_map(|q| q.split('&')))
                .find_map(|p| p.strip_prefix("every="))
                .and_then(|v| iolab_model::parse_duration(v).ok())
                .unwrap_or(Duration::from_secs(1))
                .max(MIN_EVERY);
            Some(Held::Events { every })
        }
        _ => None,
    }
}

/// Serve a held route on this thread until it ends. `answer` runs a
/// `/work` target as the model runs requests (for `/ws?steps=...`).
pub fn serve(
    ctx: &Ctx,
    stream: TcpStream,
    req: &Request,
    held: Held,
    answer: &dyn Fn(&str) -> Reply,
) {
    match held {
        Held::Ws { work } => websocket(ctx, stream, req, work.as_deref(), answer),
        Held::Events { every } => events(ctx, stream, every),
    }
}

fn websocket(
    ctx: &Ctx,
    mut stream: TcpStream,
    req: &Request,
    work: Option<&str>,
    answer: &dyn Fn(&str) -> Reply,
) {
    let Some(key) = &req.websocket_key else {
        let reply = Reply::error(
            400,
            "GET /ws needs Upgrade: websocket and Sec-WebSocket-Key",
        );
        let _ = write_reply(&mut stream, &reply, false, false);
        return;
    };
    let head = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
        derive_accept_key(key.as_bytes())
    );
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    let _ = stream.set_read_timeout(Some(TICK));
    // tungstenite's default read buffer is 128 KiB a connection, allocated
    // up front: 128 MB for 1,000 held connections, which would be charged
    // to the model (or the generator) rather than to holding them.
    let config = WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER)
        .max_message_size(Some(MAX_FRAME))
        .max_frame_size(Some(MAX_FRAME));
    let mut ws = WebSocket::from_raw_socket(stream, Role::Server, Some(config));
    let mut heard = Instant::now();
    loop {
        if ctx.shutdown.is_triggered() || heard.elapsed() > IDLE {
            let _ = ws.close(Some(tungstenite::protocol::CloseFrame {
                code: tungstenite::protocol::frame::coding::CloseCode::Away,
                reason: "server going away".into(),
            }));
            let _ = ws.flush();
            return;
        }
        match ws.read() {
            Ok(msg @ (Message::Text(_) | Message::Binary(_))) => {
                heard = Instant::now();
                if let Some(target) = work {
                    let reply = answer(target);
                    if reply.status != 200 {
                        let _ = ws.close(Some(tungstenite::protocol::CloseFrame {
                            code: tungstenite::protocol::frame::coding::CloseCode::Error,
                            reason: "the message's steps failed".into(),
                        }));
                        let _ = ws.flush();
                        return;
                    }
                }
                if ws.send(msg).is_err() {
                    return;
                }
            }
            Ok(_) => heard = Instant::now(),
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            // Closed by the client (tungstenite answered its close), or broken.
            Err(_) => return,
        }
    }
}

fn events(ctx: &Ctx, mut stream: TcpStream, every: Duration) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    let mut due = Instant::now();
    for seq in 1u64.. {
        while Instant::now() < due {
            if ctx.shutdown.is_triggered() {
                return;
            }
            std::thread::sleep((due - Instant::now()).min(TICK));
        }
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros());
        let event = format!("id: {seq}\ndata: {{\"seq\":{seq},\"sent_unix_us\":{stamp}}}\n\n");
        if ctx.shutdown.is_triggered() || stream.write_all(event.as_bytes()).is_err() {
            return;
        }
        due += every;
    }
}
