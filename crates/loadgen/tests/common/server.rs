//! A small real HTTP/1.1 server on 127.0.0.1 for tests and the benchmark.
//! Keep-alive; routes: `/` (200 "hello"), `/delay?ms=N` (200 after N ms),
//! `/status?code=C` (chunked answer with status C), `/garbage` (not HTTP),
//! `/close` (reads the request, closes without answering), `/eof` (200 with
//! the body delimited by closing the connection). Counts accepted connections.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Counters the tests read.
#[derive(Debug, Default)]
pub struct Stats {
    pub accepted: AtomicU64,
    pub requests: AtomicU64,
    /// The client addresses connections came from.
    pub peers: std::sync::Mutex<std::collections::BTreeSet<std::net::IpAddr>>,
}

/// A running server; it lives until the process exits.
pub struct Server {
    pub addr: SocketAddr,
    pub stats: Arc<Stats>,
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}

/// Start a server on 127.0.0.1:`port` (0 = any free port) in a background
/// thread with a current-thread runtime.
pub fn spawn(port: u16) -> Server {
    let std_listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("bind 127.0.0.1");
    std_listener.set_nonblocking(true).unwrap();
    let addr = std_listener.local_addr().unwrap();
    let stats = Arc::new(Stats::default());
    let s = stats.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(serve(std_listener, s));
    });
    Server { addr, stats }
}

/// Serve forever on an already-bound listener.
pub async fn serve(listener: std::net::TcpListener, stats: Arc<Stats>) {
    let listener = TcpListener::from_std(listener).unwrap();
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            continue;
        };
        stats.accepted.fetch_add(1, Ordering::Relaxed);
        stats.peers.lock().unwrap().insert(peer.ip());
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection(stream, stats.clone()));
    }
}

fn query_u64(path: &str, key: &str) -> Option<u64> {
    let q = path.split_once('?')?.1;
    q.split('&')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

async fn connection(mut stream: TcpStream, stats: Arc<Stats>) {
    let mut buf = vec![0u8; 4096];
    let mut len = 0;
    loop {
        let end = loop {
            if let Some(i) = buf[..len].windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if len == buf.len() {
                return;
            }
            match stream.read(&mut buf[len..]).await {
                Ok(0) | Err(_) => return,
                Ok(n) => len += n,
            }
        };
        stats.requests.fetch_add(1, Ordering::Relaxed);
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.copy_within(end..len, 0);
        len -= end;
        let path = head.split(' ').nth(1).unwrap_or("/").to_string();
        let route = path.split('?').next().unwrap_or("/");
        let reply: Vec<u8> = match route {
            "/delay" => {
                let ms = query_u64(&path, "ms").unwrap_or(0);
                // tokio's timer rounds up to whole milliseconds; a blocking
                // sleep on the blocking pool is exact to ~0.1 ms, so the
                // accuracy benchmark measures the generator, not this server.
                let _ = tokio::task::spawn_blocking(move || {
                    std::thread::sleep(Duration::from_millis(ms))
                })
                .await;
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello"
                    .to_vec()
            }
            "/status" => {
                let code = query_u64(&path, "code").unwrap_or(200);
                format!("HTTP/1.1 {code} X\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n").into_bytes()
            }
            "/garbage" => b"THIS IS NOT HTTP\r\n\r\n".to_vec(),
            "/close" => return,
            "/eof" => {
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close")
                    .await;
                return;
            }
            _ => b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello"
                .to_vec(),
        };
        if stream.write_all(&reply).await.is_err() {
            return;
        }
    }
}
