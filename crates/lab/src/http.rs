//! A tiny blocking HTTP/1.1 GET for `/health` and `/metrics` on loopback:
//! one connection per call, `Connection: close`, bounded in time and size.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Largest answer read (a `/metrics` page is a few KiB).
const MAX_BODY: usize = 1 << 20;

/// An answer.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Body as text.
    pub body: String,
}

/// `http://HOST:PORT[/...]` -> port.
pub fn port_of(url: &str) -> Option<u16> {
    let rest = url.strip_prefix("http://")?;
    let hostport = rest.split('/').next()?;
    let (_, port) = hostport.rsplit_once(':')?;
    port.parse().ok().filter(|p| *p != 0)
}

fn split(url: &str) -> Option<(SocketAddr, String, String)> {
    let rest = url.strip_prefix("http://")?;
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr: SocketAddr = hostport.replace("localhost", "127.0.0.1").parse().ok()?;
    Some((addr, hostport.to_string(), path.to_string()))
}

/// GET `url` within `timeout` (connect + answer).
pub fn get(url: &str, timeout: Duration) -> std::io::Result<Response> {
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("bad URL {url}"));
    let (addr, host, path) = split(url).ok_or_else(bad)?;
    let deadline = Instant::now() + timeout;
    let mut s = TcpStream::connect_timeout(&addr, timeout)?;
    let left = || {
        deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    };
    s.set_write_timeout(Some(left()))?;
    s.set_nodelay(true)?;
    // One write: a peer that answers after its first read must see it all.
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nUser-Agent: iolab-run\r\n\r\n"
    );
    s.write_all(request.as_bytes())?;
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 8192];
    loop {
        s.set_read_timeout(Some(left()))?;
        let n = s.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > MAX_BODY {
            break;
        }
        if complete(&buf) {
            break;
        }
        if Instant::now() >= deadline {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
    }
    parse(&buf).ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, "malformed HTTP answer")
    })
}

/// Headers end and Content-Length bytes have arrived.
fn complete(buf: &[u8]) -> bool {
    let Some(end) = find(buf, b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    match head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        Some(len) => buf.len() >= end + 4 + len,
        None => false,
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn parse(buf: &[u8]) -> Option<Response> {
    let end = find(buf, b"\r\n\r\n")?;
    let head = std::str::from_utf8(&buf[..end]).ok()?;
    let status_line = head.lines().next()?;
    let mut parts = status_line.split_whitespace();
    if !parts.next()?.starts_with("HTTP/1.") {
        return None;
    }
    let status = parts.next()?.parse().ok()?;
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let raw = &buf[end + 4..];
    let body = if chunked { dechunk(raw) } else { raw.to_vec() };
    Some(Response {
        status,
        body: String::from_utf8_lossy(&body).to_string(),
    })
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(i) = find(raw, b"\r\n") {
        let size = std::str::from_utf8(&raw[..i])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok());
        let Some(size) = size.filter(|s| *s > 0) else {
            break;
        };
        let start = i + 2;
        let end = (start + size).min(raw.len());
        out.extend_from_slice(&raw[start..end]);
        raw = &raw[(end + 2).min(raw.len())..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn ports_from_urls() {
        assert_eq!(port_of("http://127.0.0.1:8080"), Some(8080));
        assert_eq!(port_of("http://127.0.0.1:8080/work"), Some(8080));
        assert_eq!(port_of("listening on 8080"), None);
        assert_eq!(port_of("http://127.0.0.1:0"), None);
    }

    #[test]
    fn gets_from_a_real_socket() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let h = std::thread::spawn(move || {
            for body in ["ok", "4\r\nabcd\r\n2\r\nef\r\n0\r\n\r\n"] {
                let (mut s, _) = l.accept().unwrap();
                let mut req = Vec::new();
                let mut b = [0u8; 1024];
                while find(&req, b"\r\n\r\n").is_none() {
                    let n = s.read(&mut b).unwrap();
                    assert!(n > 0, "request cut short");
                    req.extend_from_slice(&b[..n]);
                }
                let head = if body == "ok" {
                    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n".to_string()
                } else {
                    "HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\n\r\n".to_string()
                };
                s.write_all(head.as_bytes()).unwrap();
                s.write_all(body.as_bytes()).unwrap();
            }
        });
        let url = format!("http://127.0.0.1:{port}/health");
        let r = get(&url, Duration::from_secs(2)).unwrap();
        assert_eq!((r.status, r.body.as_str()), (200, "ok"));
        let r = get(&url, Duration::from_secs(2)).unwrap();
        assert_eq!((r.status, r.body.as_str()), (503, "abcdef"));
        h.join().unwrap();
        assert!(get(&url, Duration::from_millis(200)).is_err());
    }
}
