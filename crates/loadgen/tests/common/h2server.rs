//! HTTP/2 servers for the tests, each doing one thing a real server may
//! do: answer after a delay under a stream limit, reset streams with a
//! code, send GOAWAY mid-run, answer HTTP/1.1 to HTTP/2's preface, or
//! break the client's SETTINGS. The well-behaved ones are the `h2`
//! crate's server; the broken ones write their bytes by hand (no library
//! breaks the protocol on request), which is all this file is for.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use h2::Reason;

/// What the server does with each request.
#[derive(Debug, Clone, Copy)]
pub enum Behaviour {
    /// Answer 200 after `delay`, at most `max_streams` streams at once.
    Serve { delay: Duration, max_streams: u32 },
    /// Reset every stream with this code.
    Reset(Reason),
    /// Answer `n` requests per connection, then GOAWAY (NO_ERROR) at once,
    /// refusing what came after.
    GoawayAfter(usize),
}

/// A running server; stopped when dropped.
pub struct Server {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = std::net::TcpStream::connect(self.addr);
    }
}

/// Serve `b` on a free loopback port (h2c, prior knowledge).
pub fn spawn(b: Behaviour) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            listener.set_nonblocking(true).unwrap();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            while let Ok((tcp, _)) = listener.accept().await {
                if flag.load(Ordering::Relaxed) {
                    break;
                }
                tokio::spawn(connection(tcp, b));
            }
        });
    });
    Server { addr, stop }
}

async fn connection(tcp: tokio::net::TcpStream, b: Behaviour) {
    let mut builder = h2::server::Builder::new();
    if let Behaviour::Serve { max_streams, .. } = b {
        builder.max_concurrent_streams(max_streams);
    }
    let Ok(mut conn) = builder.handshake::<_, Bytes>(tcp).await else {
        return;
    };
    let mut served = 0usize;
    while let Some(Ok((req, mut respond))) = conn.accept().await {
        match b {
            Behaviour::Serve { delay, .. } => {
                tokio::spawn(async move {
                    drop(req);
                    tokio::time::sleep(delay).await;
                    let resp = http::Response::new(());
                    if let Ok(mut body) = respond.send_response(resp, false) {
                        let _ = body.send_data(Bytes::from_static(b"ok"), true);
                    }
                });
            }
            Behaviour::Reset(reason) => respond.send_reset(reason),
            Behaviour::GoawayAfter(n) => {
                served += 1;
                if served > n {
                    conn.abrupt_shutdown(Reason::NO_ERROR);
                    break;
                }
                let resp = http::Response::new(());
                let _ = respond.send_response(resp, true);
            }
        }
    }
    // Let the connection finish what it owes (GOAWAY, pending frames).
    let _ = std::future::poll_fn(|cx| conn.poll_closed(cx)).await;
}

/// A server that answers HTTP/2's preface as an HTTP/1.1-only server does.
pub fn http1_only() -> Server {
    raw(|mut s| {
        let mut buf = [0u8; 1024];
        let _ = s.read(&mut buf);
        let _ = s.write_all(
            b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    })
}

/// A server that agrees to HTTP/2, then answers each request with a DATA
/// frame larger than the client's SETTINGS_MAX_FRAME_SIZE (16,384) allows.
pub fn breaks_frame_size() -> Server {
    raw(|mut s| {
        // Its SETTINGS (none changed) and the ACK of the client's.
        let _ = s.write_all(&frame(4, 0, 0, &[]));
        let _ = s.write_all(&frame(4, 1, 0, &[]));
        let mut buf = vec![0u8; 65536];
        let mut have = Vec::new();
        let mut preface_done = false;
        loop {
            let Ok(n) = s.read(&mut buf) else { return };
            if n == 0 {
                return;
            }
            have.extend_from_slice(&buf[..n]);
            if !preface_done {
                if have.len() < 24 {
                    continue;
                }
                have.drain(..24);
                preface_done = true;
            }
            while have.len() >= 9 {
                let len = u32::from_be_bytes([0, have[0], have[1], have[2]]) as usize;
                if have.len() < 9 + len {
                    break;
                }
                let (kind, flags) = (have[3], have[4]);
                let id = u32::from_be_bytes([have[5], have[6], have[7], have[8]]);
                let payload: Vec<u8> = have.drain(..9 + len).skip(9).collect();
                if kind == 6 && flags & 1 == 0 {
                    // PING: answered, as any HTTP/2 server does.
                    let _ = s.write_all(&frame(6, 1, 0, &payload));
                }
                if kind == 1 {
                    // HEADERS :status 200 (HPACK static index 8), then too big a DATA.
                    let _ = s.write_all(&frame(1, 4, id, &[0x88]));
                    let _ = s.write_all(&frame(0, 1, id, &vec![b'x'; 20_000]));
                }
            }
        }
    })
}

/// One HTTP/2 frame: type, flags, stream, payload.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// A blocking server running `serve` on each connection, in its own thread.
fn raw(serve: fn(std::net::TcpStream)) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            if flag.load(Ordering::Relaxed) {
                break;
            }
            if let Ok(s) = s {
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                std::thread::spawn(move || serve(s));
            }
        }
    });
    Server { addr, stop }
}
