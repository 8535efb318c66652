//! Odd but ordinary HTTP/1.1 servers on 127.0.0.1 for the engines to meet
//! (issue 30): each answers every request with the same bytes, and may close
//! an idle kept-alive connection after a while (nginx's `keepalive_timeout`)
//! or answer early, without reading the request's body, and close.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How an odd server behaves.
#[derive(Debug, Clone)]
pub struct Odd {
    /// The bytes of every answer.
    pub answer: Vec<u8>,
    /// Close a kept-alive connection that stayed idle this long.
    pub idle_close: Option<Duration>,
    /// Answer as soon as the head is in, without reading a body, then close.
    pub early: bool,
}

impl Odd {
    /// A server answering `answer` to every request, keeping connections.
    pub fn answering(answer: &[u8]) -> Odd {
        Odd {
            answer: answer.to_vec(),
            idle_close: None,
            early: false,
        }
    }
}

/// A running odd server (lives until the process exits).
pub struct OddServer {
    pub addr: SocketAddr,
    /// Request heads read.
    pub requests: Arc<AtomicU64>,
    /// Connections accepted.
    pub accepted: Arc<AtomicU64>,
}

impl OddServer {
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
}

/// Start `odd` on a free port, a thread per connection.
pub fn spawn(odd: Odd) -> OddServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(AtomicU64::new(0));
    let accepted = Arc::new(AtomicU64::new(0));
    let (r, a) = (requests.clone(), accepted.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            a.fetch_add(1, Ordering::Relaxed);
            let (odd, r) = (odd.clone(), r.clone());
            std::thread::spawn(move || connection(stream, &odd, &r));
        }
    });
    OddServer {
        addr,
        requests,
        accepted,
    }
}

fn connection(mut stream: TcpStream, odd: &Odd, requests: &AtomicU64) {
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        // Idle: wait for the next request up to the idle close.
        let _ = stream.set_read_timeout(odd.idle_close);
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        requests.fetch_add(1, Ordering::Relaxed);
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let body: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if odd.early {
            let _ = stream.write_all(&odd.answer);
            // Closed with the body unread: the kernel answers with a reset.
            return;
        }
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        while buf.len() < head_end + body {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        buf.drain(..head_end + body);
        if stream.write_all(&odd.answer).is_err() {
            return;
        }
    }
}
