//! HTTP/2 servers written frame by frame on loopback, for the hostile
//! tests (issue 49): each sends the SETTINGS it is given, answers PING or
//! not, and answers each request (a stream the client ended) with the
//! bytes its script makes for that stream. No library breaks the protocol
//! on request, so the broken servers are written by hand, as
//! `h2server.rs` does for a few.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// SETTINGS identifiers (RFC 9113, 6.5.2).
pub const ENABLE_PUSH: u16 = 0x2;
pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
pub const MAX_FRAME_SIZE: u16 = 0x5;
pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;

/// What a server does.
#[derive(Clone)]
pub struct Script {
    /// Its SETTINGS: (identifier, value).
    pub settings: Vec<(u16, u32)>,
    /// Whether it acknowledges the client's PINGs.
    pub ack_ping: bool,
    /// The first connection (the generator's check before the run) gets
    /// no SETTINGS values: what `settings` break is met by the run.
    pub clean_first: bool,
    /// The bytes it writes for the request on stream `id`.
    pub answer: Arc<dyn Fn(u32) -> Vec<u8> + Send + Sync>,
}

impl Script {
    /// A well-behaved server answering each request with `answer(id)`.
    pub fn answering(answer: impl Fn(u32) -> Vec<u8> + Send + Sync + 'static) -> Script {
        Script {
            settings: Vec::new(),
            ack_ping: true,
            clean_first: false,
            answer: Arc::new(answer),
        }
    }
}

/// A running server (lives until the process exits).
pub struct RawServer {
    pub addr: SocketAddr,
    /// Requests (HEADERS frames) the server read.
    pub requests: Arc<AtomicU64>,
    /// Connections accepted.
    pub accepted: Arc<AtomicU64>,
}

impl RawServer {
    pub fn url(&self, scheme: &str) -> String {
        format!("{scheme}://{}/", self.addr)
    }

    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }
}

/// Serve `script` on a free loopback port, a thread per connection.
pub fn spawn(script: Script) -> RawServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(AtomicU64::new(0));
    let accepted = Arc::new(AtomicU64::new(0));
    let (r, a) = (requests.clone(), accepted.clone());
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            let first = a.fetch_add(1, Ordering::Relaxed) == 0;
            let mut script = script.clone();
            if first && script.clean_first {
                script.settings.clear();
            }
            let r = r.clone();
            std::thread::spawn(move || connection(s, &script, &r));
        }
    });
    RawServer {
        addr,
        requests,
        accepted,
    }
}

/// One connection: SETTINGS first, then frame by frame until the client
/// closes or stays silent 10 s.
fn connection(mut s: TcpStream, script: &Script, requests: &AtomicU64) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = s.set_nodelay(true);
    let mut settings = Vec::new();
    for (id, value) in &script.settings {
        settings.extend_from_slice(&id.to_be_bytes());
        settings.extend_from_slice(&value.to_be_bytes());
    }
    let _ = s.write_all(&frame(4, 0, 0, &settings));
    let mut have = Vec::new();
    let mut buf = vec![0u8; 65536];
    let mut preface = false;
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => have.extend_from_slice(&buf[..n]),
        }
        if !preface {
            if have.len() < 24 {
                continue;
            }
            have.drain(..24);
            preface = true;
        }
        while have.len() >= 9 {
            let len = u32::from_be_bytes([0, have[0], have[1], have[2]]) as usize;
            if have.len() < 9 + len {
                break;
            }
            let (kind, flags) = (have[3], have[4]);
            let id = u32::from_be_bytes([have[5] & 0x7f, have[6], have[7], have[8]]);
            let payload: Vec<u8> = have.drain(..9 + len).skip(9).collect();
            let reply = match (kind, flags & 1) {
                (4, 0) => frame(4, 1, 0, &[]),
                (6, 0) if script.ack_ping => frame(6, 1, 0, &payload),
                (1, end) => {
                    requests.fetch_add(1, Ordering::Relaxed);
                    if end == 1 {
                        (script.answer)(id)
                    } else {
                        Vec::new()
                    }
                }
                (0, 1) => (script.answer)(id),
                _ => Vec::new(),
            };
            if !reply.is_empty() && s.write_all(&reply).is_err() {
                return;
            }
        }
    }
}

/// One HTTP/2 frame: type, flags, stream, payload.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// A HEADERS frame (END_HEADERS), ending the stream when `end`.
pub fn headers(stream: u32, end: bool, block: &[u8]) -> Vec<u8> {
    frame(1, 4 | u8::from(end), stream, block)
}

/// A DATA frame, ending the stream when `end`.
pub fn data(stream: u32, end: bool, payload: &[u8]) -> Vec<u8> {
    frame(0, u8::from(end), stream, payload)
}

/// HPACK: `:status code` (a literal with the indexed name `:status`).
pub fn status(code: u16) -> Vec<u8> {
    let mut b = vec![0x08, 3];
    b.extend_from_slice(code.to_string().as_bytes());
    b
}

/// HPACK: `name: value`, a literal with a new name, never indexed (both
/// under 127 bytes, lower-case).
pub fn field(name: &str, value: &str) -> Vec<u8> {
    let mut b = vec![0x00, name.len() as u8];
    b.extend_from_slice(name.as_bytes());
    b.push(value.len() as u8);
    b.extend_from_slice(value.as_bytes());
    b
}

/// A gRPC message prefix: compressed flag and length.
pub fn grpc_prefix(compressed: bool, len: u32) -> Vec<u8> {
    let mut b = vec![u8::from(compressed)];
    b.extend_from_slice(&len.to_be_bytes());
    b
}

/// `:status 200`, ending the stream.
pub fn ok(id: u32) -> Vec<u8> {
    headers(id, true, &status(200))
}

/// A gRPC answer: 200, `content-type: application/grpc` and `extra`
/// fields, then `body` and the trailers `grpc-status: 0` (none when
/// `trailers` is false: the stream stays open).
pub fn grpc_answer(id: u32, extra: &[u8], body: &[u8], trailers: bool) -> Vec<u8> {
    let mut block = status(200);
    block.extend(field("content-type", "application/grpc"));
    block.extend_from_slice(extra);
    let mut bytes = headers(id, false, &block);
    bytes.extend(data(id, false, body));
    if trailers {
        bytes.extend(headers(id, true, &field("grpc-status", "0")));
    }
    bytes
}
