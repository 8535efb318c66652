//! A tiny blocking HTTP/1.1 client, enough to check a target byte by byte:
//! one request per connection, `Content-Length`, chunked or read-to-close
//! bodies. Deliberately independent of every server iolab has.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::VerifyError;

/// Where a target is: its socket address, Host header and path prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The resolved address.
    pub addr: SocketAddr,
    /// `host:port` for the Host header.
    pub host: String,
    /// Path prefix without a trailing slash (usually empty).
    pub base: String,
}

/// One answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Headers in order, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// Body as text (lossy UTF-8).
    pub body: String,
    /// From sending the request to the last body byte.
    pub elapsed: Duration,
}

impl HttpResponse {
    /// The first header called `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Target {
    /// Read `http://HOST:PORT[/PREFIX]`.
    pub fn parse(url: &str) -> Result<Target, VerifyError> {
        let bad = |why: &str| {
            VerifyError::BadUrl(format!(
                "bad URL '{url}': {why} (use e.g. http://127.0.0.1:8080)"
            ))
        };
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| bad("only http:// targets can be verified"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.is_empty() {
            return Err(bad("missing host"));
        }
        if path.contains('?') || path.contains('#') {
            return Err(bad("give the base URL, without a query"));
        }
        let has_port = match authority.rfind(']') {
            Some(i) => authority[i..].contains(':'),
            None => authority.contains(':'),
        };
        let with_port = if has_port {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        let addr = with_port
            .to_socket_addrs()
            .map_err(|e| bad(&format!("cannot resolve '{authority}': {e}")))?
            .next()
            .ok_or_else(|| bad("host resolves to no address"))?;
        Ok(Target {
            addr,
            host: authority.to_string(),
            base: path.trim_end_matches('/').to_string(),
        })
    }

    /// `GET base+path`, within `timeout` for connecting and for the answer.
    pub fn get(&self, path: &str, timeout: Duration) -> io::Result<HttpResponse> {
        let mut stream = TcpStream::connect_timeout(&self.addr, timeout)?;
        let _ = stream.set_nodelay(true);
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        let started = Instant::now();
        let request = format!(
            "GET {}{} HTTP/1.1\r\nHost: {}\r\nUser-Agent: iolab-verify\r\nAccept: */*\r\nConnection: close\r\n\r\n",
            self.base, path, self.host
        );
        // One write: a target that answers before reading everything must
        // not turn into a broken pipe here. If the write fails anyway, an
        // answer may still be waiting: read it before giving up.
        if let Err(e) = stream.write_all(request.as_bytes()) {
            return read_response(&mut stream, started, timeout).map_err(|_| e);
        }
        let resp = read_response(&mut stream, started, timeout)?;
        Ok(resp)
    }
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

fn read_response(
    stream: &mut TcpStream,
    started: Instant,
    timeout: Duration,
) -> io::Result<HttpResponse> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        if buf.len() > 64 * 1024 {
            return Err(invalid("response head longer than 64 KiB"));
        }
        if started.elapsed() > timeout {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "no answer in time"));
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(invalid(if buf.is_empty() {
                "connection closed without an answer".to_string()
            } else {
                format!(
                    "answer is not HTTP: {:?}",
                    String::from_utf8_lossy(&buf[..buf.len().min(60)])
                )
            }));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head =
        std::str::from_utf8(&buf[..head_end]).map_err(|_| invalid("response head is not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let (version, code) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    if !version.starts_with("HTTP/1.") {
        return Err(invalid(format!("answer is not HTTP/1.x: {status_line:?}")));
    }
    let status: u16 = code
        .parse()
        .map_err(|_| invalid(format!("bad status line {status_line:?}")))?;
    let mut headers = Vec::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let (n, v) = line
            .split_once(':')
            .ok_or_else(|| invalid(format!("bad header line {line:?}")))?;
        headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let mut rest = buf[head_end..].to_vec();
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let body =
        if find("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
            read_to_end(stream, &mut rest, started, timeout)?;
            dechunk(&rest)?
        } else if let Some(len) = find("content-length") {
            let len: usize = len
                .parse()
                .map_err(|_| invalid(format!("bad Content-Length {len:?}")))?;
            while rest.len() < len {
                let n = stream.read(&mut chunk)?;
                if n == 0 {
                    return Err(invalid(format!("body shorter than Content-Length {len}")));
                }
                rest.extend_from_slice(&chunk[..n]);
            }
            rest.truncate(len);
            rest
        } else {
            read_to_end(stream, &mut rest, started, timeout)?;
            rest
        };
    Ok(HttpResponse {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        elapsed: started.elapsed(),
    })
}

fn read_to_end(
    stream: &mut TcpStream,
    out: &mut Vec<u8>,
    started: Instant,
    timeout: Duration,
) -> io::Result<()> {
    let mut chunk = [0u8; 8192];
    loop {
        if started.elapsed() > timeout {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "body did not end in time",
            ));
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        out.extend_from_slice(&chunk[..n]);
        if out.len() > 16 * 1024 * 1024 {
            return Err(invalid("body longer than 16 MiB"));
        }
    }
}

fn dechunk(mut data: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| invalid("bad chunked body"))?;
        let size_text =
            std::str::from_utf8(&data[..line_end]).map_err(|_| invalid("bad chunk size"))?;
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| invalid("bad chunk size"))?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if data.len() < size + 2 {
            return Err(invalid("chunked body cut short"));
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_urls() {
        let t = Target::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(t.addr.port(), 8080);
        assert_eq!(t.base, "");
        let t = Target::parse("http://127.0.0.1:9/app/").unwrap();
        assert_eq!(t.base, "/app");
        assert_eq!(Target::parse("http://127.0.0.1").unwrap().addr.port(), 80);
        assert!(Target::parse("https://x:1").is_err());
        assert!(Target::parse("127.0.0.1:80").is_err());
        assert!(Target::parse("http://").is_err());
        assert!(Target::parse("http://127.0.0.1:notaport").is_err());
    }

    #[test]
    fn dechunks() {
        assert_eq!(
            dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n").unwrap(),
            b"abcde"
        );
        assert!(dechunk(b"zz\r\n").is_err());
    }
}
