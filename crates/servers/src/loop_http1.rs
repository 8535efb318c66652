//! The event-loop models' connections: HTTP/1.1 served here, on the request's
//! own task, and HTTP/2 with prior knowledge (h2c) handed to hyper.
//!
//! Written by hand because of what a waiting request costs. A heap profile
//! of `loop-async` holding 3,000 requests of `sleep:8000` (heaptrack,
//! 2026-11-25) put 37 KiB of heap behind each: hyper's HTTP/1 connection
//! keeps a read buffer (8 KiB reserved, grown to 16 KiB) and an 8 KiB write
//! buffer for the connection's whole life, 3.6 KiB of task, and a 7 KiB
//! boxed step future (the backends' async call, fixed in `iolab-backends`);
//! RSS grew 23 KiB per waiting request. A connection waiting for its answer
//! needs no buffer at all: here the head is read into a small buffer that is
//! freed once the request is parsed (unless pipelined bytes follow), and the
//! answer is written in one vectored write from the reply itself. The
//! HTTP/1 grammar is [`crate::http1`]'s, the one every built-in server uses.

use std::io::IoSlice;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;

use crate::ctx::Ctx;
use crate::http1::{parse_head, reply_head, CONTINUE, KEEP_ALIVE, REQUEST_TIMEOUT};
use crate::routes::Reply;

/// The client preface of HTTP/2 with prior knowledge.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// First read of a head: most requests' heads fit; it grows to [`MAX_HEAD`].
const FIRST_READ: usize = 512;

/// Connections being served, so a shutdown can wait for them.
#[derive(Debug, Default)]
pub struct Live(AtomicUsize);

impl Live {
    /// Connections open now.
    pub fn count(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }
}

/// Held while a connection is served.
struct Held(Arc<Live>);

impl Held {
    fn new(live: &Arc<Live>) -> Held {
        live.0.fetch_add(1, Ordering::AcqRel);
        Held(live.clone())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0 .0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What the first bytes of a connection say it speaks.
pub enum Opening {
    /// HTTP/2 with prior knowledge: the stream with the bytes read so far.
    H2(Prefixed),
    /// HTTP/1.x: served by [`serve_h1`] (bytes read so far inside).
    H1(TcpStream, Vec<u8>),
    /// Closed, timed out or shut down before a request began.
    Gone,
}

/// Read until the first bytes tell HTTP/2's preface from an HTTP/1 head.
pub async fn open(ctx: &Ctx, mut stream: TcpStream) -> Opening {
    let mut buf = Vec::new();
    loop {
        let n = buf.len().min(PREFACE.len());
        if buf.len() >= PREFACE.len() || buf[..n] != PREFACE[..n] {
            break;
        }
        if !read_more(ctx, &mut stream, &mut buf, KEEP_ALIVE).await {
            return Opening::Gone;
        }
    }
    if buf.starts_with(PREFACE) {
        Opening::H2(Prefixed {
            pre: buf,
            at: 0,
            io: stream,
        })
    } else {
        Opening::H1(stream, buf)
    }
}

/// Read at least one more byte into `buf` within `wait`; false when the
/// peer closed, the wait passed, the read failed or the server shuts down.
async fn read_more(ctx: &Ctx, stream: &mut TcpStream, buf: &mut Vec<u8>, wait: Duration) -> bool {
    if buf.capacity() == buf.len() {
        buf.reserve(if buf.is_empty() {
            FIRST_READ
        } else {
            buf.len()
        });
    }
    tokio::select! {
        biased;
        _ = ctx.shutdown.wait(), if buf.is_empty() => false,
        r = tokio::time::timeout(wait, stream.read_buf(buf)) => matches!(r, Ok(Ok(n)) if n > 0),
    }
}

/// Serve HTTP/1.1 requests on `stream` in turn until the client or the
/// server closes it; `answer` makes each reply from the method and target.
pub async fn serve_h1<F, Fut>(
    ctx: &Ctx,
    live: &Arc<Live>,
    mut stream: TcpStream,
    mut buf: Vec<u8>,
    answer: F,
) where
    F: Fn(String, String) -> Fut,
    Fut: std::future::Future<Output = Reply>,
{
    let _held = Held::new(live);
    loop {
        let started = Instant::now();
        let head = loop {
            match parse_head(&buf) {
                Ok(Some(head)) => break head,
                Ok(None) => {}
                Err(reply) => {
                    linger(&mut stream, &reply).await;
                    return;
                }
            }
            let wait = if buf.is_empty() {
                KEEP_ALIVE
            } else {
                REQUEST_TIMEOUT.saturating_sub(started.elapsed())
            };
            if !read_more(ctx, &mut stream, &mut buf, wait).await {
                return;
            }
        };
        let total = head.len + head.body_len;
        if head.expect_continue && buf.len() < total && stream.write_all(CONTINUE).await.is_err() {
            return;
        }
        while buf.len() < total {
            if !read_more(ctx, &mut stream, &mut buf, REQUEST_TIMEOUT).await {
                return;
            }
        }
        buf.drain(..total);
        if buf.is_empty() {
            // Nothing pipelined: hold no buffer while the request waits.
            buf = Vec::new();
        }
        let req = head.request;
        if let Some(held) = crate::held::route(&req) {
            // The connection's task holds it: what one costs an event loop.
            return crate::held_async::serve(ctx, stream, &req, held, answer).await;
        }
        let (head_only, wants_more) = (req.method == "HEAD", req.keep_alive);
        let reply = answer(req.method, req.target).await;
        let keep_alive = wants_more && !ctx.shutdown.is_triggered();
        if write_reply(&mut stream, &reply, keep_alive, head_only)
            .await
            .is_err()
            || !keep_alive
        {
            let _ = stream.shutdown().await;
            return;
        }
    }
}

/// Write the head and the body in one vectored write (a fetched value is
/// written from its own buffer).
async fn write_reply(
    stream: &mut TcpStream,
    reply: &Reply,
    keep_alive: bool,
    head_only: bool,
) -> std::io::Result<()> {
    let head = reply_head(reply, keep_alive);
    let body: &[u8] = if head_only { &[] } else { &reply.body };
    let (mut h, mut b) = (&head[..], body);
    while !h.is_empty() || !b.is_empty() {
        let n = stream
            .write_vectored(&[IoSlice::new(h), IoSlice::new(b)])
            .await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        let from_head = n.min(h.len());
        h = &h[from_head..];
        b = &b[n - from_head..];
    }
    Ok(())
}

/// Answer a request that cannot be served and close without resetting the
/// answer away: stop writing, then drop what the client still sends for a
/// while (as [`crate::http1::answer_and_linger`] does).
async fn linger(stream: &mut TcpStream, reply: &Reply) {
    if write_reply(stream, reply, false, false).await.is_err() {
        return;
    }
    let _ = stream.shutdown().await;
    let mut chunk = [0u8; 1024];
    let mut dropped = 0usize;
    let end = tokio::time::Instant::now() + crate::http1::LINGER;
    while dropped < (1 << 20) {
        match tokio::time::timeout_at(end, stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => dropped += n,
            _ => return,
        }
    }
}

/// A stream that yields bytes already read before the rest of it (the
/// HTTP/2 preface read to tell the protocols apart).
pub struct Prefixed {
    pre: Vec<u8>,
    at: usize,
    io: TcpStream,
}

impl AsyncRead for Prefixed {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.at < self.pre.len() {
            let n = (self.pre.len() - self.at).min(out.remaining());
            let at = self.at;
            out.put_slice(&self.pre[at..at + n]);
            self.at += n;
            if self.at == self.pre.len() {
                self.pre = Vec::new();
                self.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.io).poll_read(cx, out)
    }
}

impl AsyncWrite for Prefixed {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
