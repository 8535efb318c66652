//! memcached's clients: a get over the text protocol, with a blocking client
//! (std `TcpStream`) and a non-blocking one (tokio), each with its own pool of
//! `mc_pool` connections.
//!
//! An answer is `VALUE <key> <flags> <bytes>\r\n<data>\r\nEND\r\n` (or `END`
//! for a miss). The value is read into ONE buffer sized from the header's byte
//! count: no growing, no re-scanning of what was already read. (E4's client
//! re-scanned its whole buffer for the terminator after every chunk, which is
//! quadratic in the value size; this one is linear.)
//!
//! The one-shot helpers [`set`], [`get`] and [`stats`] open their own
//! connection; `iolab backend mc-fill` and `iolab backend counts` use them.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use bytes::Bytes;
use iolab_model::steps::{BackendKind, IoCall};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

use crate::backend::{key, CallFuture, Clients};
use crate::pool::{AsyncPool, BlockingPool};
use crate::BackendError;

/// Longest a connect may take before the backend counts as unavailable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest one read or write may stall (a hung server must not hang a target).
const IO_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest header line accepted (`VALUE` + a 250-byte key + numbers).
const MAX_HEADER: u64 = 512;
/// Largest value accepted, so a garbage header cannot allocate without bound.
const MAX_VALUE: usize = 256 << 20;
/// What follows the data of a single-key get.
const TRAILER: &[u8] = b"\r\nEND\r\n";

/// Why one get failed.
#[derive(Debug)]
enum McError {
    /// The connection is unusable (refused, reset, closed, timed out).
    Broken(String),
    /// The key is not stored.
    Miss,
    /// The server answered something other than a value (an error line or
    /// garbage); the connection may be out of step, so it is dropped.
    Answer(String),
}

impl From<io::Error> for McError {
    fn from(e: io::Error) -> Self {
        McError::Broken(e.to_string())
    }
}

/// What a header line says: the value's size, or a miss.
fn parse_header(line: &str) -> Result<Option<usize>, McError> {
    let line = line.trim_end_matches(['\r', '\n']);
    if line == "END" {
        return Ok(None);
    }
    let mut words = line.split(' ');
    if words.next() != Some("VALUE") {
        if line.is_empty() {
            return Err(McError::Broken("connection closed by memcached".into()));
        }
        return Err(McError::Answer(format!("unexpected answer '{line}'")));
    }
    let bytes = words
        .nth(2)
        .and_then(|b| b.parse::<usize>().ok())
        .ok_or_else(|| McError::Answer(format!("malformed header '{line}'")))?;
    if bytes > MAX_VALUE {
        return Err(McError::Answer(format!(
            "value of {bytes} bytes is over the {MAX_VALUE}-byte limit"
        )));
    }
    Ok(Some(bytes))
}

/// Check the trailer and cut it off the buffer.
fn finish_value(mut buf: Vec<u8>, bytes: usize) -> Result<Vec<u8>, McError> {
    if &buf[bytes..] != TRAILER {
        return Err(McError::Answer("value not followed by END".into()));
    }
    buf.truncate(bytes);
    Ok(buf)
}

fn get_command(key: &str) -> Vec<u8> {
    format!("get {key}\r\n").into_bytes()
}

fn connect_std(addr: &str) -> io::Result<BufReader<TcpStream>> {
    let mut last = io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("'{addr}' resolves to nothing"),
    );
    for sa in addr.to_socket_addrs()? {
        match TcpStream::connect_timeout(&sa, CONNECT_TIMEOUT) {
            Ok(s) => {
                s.set_nodelay(true)?;
                s.set_read_timeout(Some(IO_TIMEOUT))?;
                s.set_write_timeout(Some(IO_TIMEOUT))?;
                return Ok(BufReader::with_capacity(64 << 10, s));
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn get_std(conn: &mut BufReader<TcpStream>, key: &str) -> Result<Vec<u8>, McError> {
    conn.get_mut().write_all(&get_command(key))?;
    let mut line = String::new();
    (&mut *conn).take(MAX_HEADER).read_line(&mut line)?;
    let bytes = parse_header(&line)?.ok_or(McError::Miss)?;
    let mut buf = vec![0u8; bytes + TRAILER.len()];
    conn.read_exact(&mut buf)?;
    finish_value(buf, bytes)
}

async fn connect_tokio(addr: &str) -> io::Result<tokio::io::BufReader<tokio::net::TcpStream>> {
    let s = tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(addr))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))??;
    s.set_nodelay(true)?;
    Ok(tokio::io::BufReader::with_capacity(64 << 10, s))
}

async fn get_tokio(
    conn: &mut tokio::io::BufReader<tokio::net::TcpStream>,
    key: &str,
) -> Result<Vec<u8>, McError> {
    let work = async {
        conn.get_mut().write_all(&get_command(key)).await?;
        let mut line = String::new();
        (&mut *conn).take(MAX_HEADER).read_line(&mut line).await?;
        let bytes = parse_header(&line)?.ok_or(McError::Miss)?;
        let mut buf = vec![0u8; bytes + TRAILER.len()];
        conn.read_exact(&mut buf).await?;
        finish_value(buf, bytes)
    };
    tokio::time::timeout(IO_TIMEOUT, work)
        .await
        .unwrap_or_else(|_| Err(McError::Broken("read timed out".into())))
}

/// Map a failed get to the error a target reports; `true` if the connection
/// can go back to the pool.
fn classify(key: &str, e: McError) -> (BackendError, bool) {
    match e {
        McError::Miss => (
            BackendError::failed(
                BackendKind::Mc,
                format!(
                    "key '{key}' not found (store it with `iolab backend mc-fill --key {key}`)"
                ),
            ),
            true,
        ),
        McError::Broken(d) => (BackendError::unavailable(BackendKind::Mc, d), false),
        McError::Answer(d) => (BackendError::failed(BackendKind::Mc, d), false),
    }
}

/// Both memcached clients of one target.
#[derive(Debug)]
pub(crate) struct Mc {
    addr: String,
    wait: Duration,
    blocking: BlockingPool<BufReader<TcpStream>>,
    nonblocking: AsyncPool<tokio::io::BufReader<tokio::net::TcpStream>>,
}

impl Mc {
    pub(crate) fn new(addr: String, pool: u32, wait: Duration) -> Self {
        Mc {
            addr,
            wait,
            blocking: BlockingPool::new(pool as usize),
            nonblocking: AsyncPool::new(pool as usize),
        }
    }

    fn unavailable(&self, e: io::Error) -> BackendError {
        BackendError::unavailable(BackendKind::Mc, format!("{}: {e}", self.addr))
    }

    /// Get `key` on the calling thread; returns the value.
    pub(crate) fn get_blocking(&self, key: &str) -> Result<Vec<u8>, BackendError> {
        let mut lease = self
            .blocking
            .acquire(self.wait)
            .map_err(|w| BackendError::pool_timeout(BackendKind::Mc, w))?;
        // A pooled connection may have died with a restarted server: if so,
        // retry once on a fresh one, as a pool's validation would.
        let mut pooled = lease.take();
        loop {
            let reused = pooled.is_some();
            let mut conn = match pooled.take() {
                Some(c) => c,
                None => connect_std(&self.addr).map_err(|e| self.unavailable(e))?,
            };
            let got = get_std(&mut conn, key);
            match attempt(key, got, conn, reused) {
                Attempt::Retry => continue,
                Attempt::Done(result, keep) => {
                    if let Some(conn) = keep {
                        lease.put(conn);
                    }
                    return result;
                }
            }
        }
    }

    /// Get `key` without blocking a thread; returns the value.
    pub(crate) async fn get_async(&self, key: &str) -> Result<Vec<u8>, BackendError> {
        let mut lease = self
            .nonblocking
            .acquire(self.wait)
            .await
            .map_err(|w| BackendError::pool_timeout(BackendKind::Mc, w))?;
        let mut pooled = lease.take();
        loop {
            let reused = pooled.is_some();
            let mut conn = match pooled.take() {
                Some(c) => c,
                None => connect_tokio(&self.addr)
                    .await
                    .map_err(|e| self.unavailable(e))?,
            };
            let got = get_tokio(&mut conn, key).await;
            match attempt(key, got, conn, reused) {
                Attempt::Retry => continue,
                Attempt::Done(result, keep) => {
                    if let Some(conn) = keep {
                        lease.put(conn);
                    }
                    return result;
                }
            }
        }
    }
}

impl Clients for Mc {
    /// The value is the buffer the client read into: handing it on costs no copy.
    fn blocking(&self, call: &IoCall) -> Result<Option<Bytes>, BackendError> {
        self.get_blocking(key(call)).map(|v| Some(Bytes::from(v)))
    }

    fn nonblocking<'a>(&'a self, call: &'a IoCall) -> CallFuture<'a> {
        Box::pin(async move {
            self.get_async(key(call))
                .await
                .map(|v| Some(Bytes::from(v)))
        })
    }
}

/// What one get on one connection means, for the blocking and the async
/// client alike: done (with the connection, when it is still good to pool)
/// or, when a pooled connection turned out broken, retry on a fresh one.
enum Attempt<C> {
    Done(Result<Vec<u8>, BackendError>, Option<C>),
    Retry,
}

fn attempt<C>(key: &str, got: Result<Vec<u8>, McError>, conn: C, reused: bool) -> Attempt<C> {
    match got {
        Ok(v) => Attempt::Done(Ok(v), Some(conn)),
        Err(McError::Broken(_)) if reused => Attempt::Retry,
        Err(e) => {
            let (err, keep) = classify(key, e);
            Attempt::Done(Err(err), keep.then_some(conn))
        }
    }
}

/// Store `value` under `key` (`set`, no expiry) on its own connection.
pub fn set(addr: &str, key: &str, value: &[u8]) -> io::Result<()> {
    let mut conn = connect_std(addr)?;
    let head = format!("set {key} 0 0 {}\r\n", value.len());
    let s = conn.get_mut();
    s.write_all(head.as_bytes())?;
    s.write_all(value)?;
    s.write_all(b"\r\n")?;
    let mut line = String::new();
    (&mut conn).take(MAX_HEADER).read_line(&mut line)?;
    match line.trim_end() {
        "STORED" => Ok(()),
        other => Err(io::Error::other(format!(
            "memcached refused the value: '{other}' (a value over 1 MB needs memcached -I, as scripts/services sets)"
        ))),
    }
}

/// Fetch `key` on its own connection; `None` on a miss.
pub fn get(addr: &str, key: &str) -> io::Result<Option<Vec<u8>>> {
    let mut conn = connect_std(addr)?;
    match get_std(&mut conn, key) {
        Ok(v) => Ok(Some(v)),
        Err(McError::Miss) => Ok(None),
        Err(McError::Broken(d)) | Err(McError::Answer(d)) => Err(io::Error::other(d)),
    }
}

/// memcached's `stats`, as (name, value) pairs in the server's order.
pub fn stats(addr: &str) -> io::Result<Vec<(String, String)>> {
    let mut conn = connect_std(addr)?;
    conn.get_mut().write_all(b"stats\r\n")?;
    let mut out = Vec::new();
    for _ in 0..1000 {
        let mut line = String::new();
        if (&mut conn).take(MAX_HEADER).read_line(&mut line)? == 0 {
            break;
        }
        let line = line.trim_end();
        if line == "END" {
            return Ok(out);
        }
        if let Some(rest) = line.strip_prefix("STAT ") {
            if let Some((k, v)) = rest.split_once(' ') {
                out.push((k.to_string(), v.to_string()));
            }
        }
    }
    Err(io::Error::other("memcached stats did not end with END"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_to_a_size_a_miss_or_an_error() {
        assert_eq!(
            parse_header("VALUE test 0 1024000\r\n").unwrap(),
            Some(1_024_000)
        );
        assert_eq!(parse_header("VALUE k 5 3 99\r\n").unwrap(), Some(3));
        assert_eq!(parse_header("END\r\n").unwrap(), None);
        assert!(matches!(
            parse_header("SERVER_ERROR out of memory\r\n"),
            Err(McError::Answer(_))
        ));
        assert!(matches!(
            parse_header("VALUE k 0 x\r\n"),
            Err(McError::Answer(_))
        ));
        assert!(matches!(parse_header(""), Err(McError::Broken(_))));
        assert!(matches!(
            parse_header("VALUE k 0 999999999999\r\n"),
            Err(McError::Answer(_))
        ));
    }

    #[test]
    fn the_trailer_is_checked_and_cut() {
        let v = finish_value(b"abc\r\nEND\r\n".to_vec(), 3).unwrap();
        assert_eq!(v, b"abc");
        assert!(finish_value(b"abc\r\nEN!\r\n".to_vec(), 3).is_err());
    }
}
