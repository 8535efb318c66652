//! The server's side of an HTTP/2 connection, watched as its bytes pass to
//! the `h2` crate: whether its SETTINGS arrived (an HTTP/1.1 answer to
//! HTTP/2's preface is no SETTINGS frame), the
//! SETTINGS_MAX_HEADER_LIST_SIZE it asked for, and a SETTINGS value a
//! client must refuse.
//!
//! Why here and not in `h2`: the crate accepts `SETTINGS_ENABLE_PUSH=1`
//! from a server (RFC 9113 6.5.2 makes it a connection error), refuses an
//! out-of-range value without saying which, and does not expose the
//! server's settings at all; and it flattens an I/O error to text, so the
//! fault is kept in [`Seen`] for the connection's users to classify.
//! A fault ends the connection (the read fails) before `h2` sees the frame.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A SETTINGS value the server may not send; the connection is closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsFault {
    /// Push is the server's to offer, never its to enable.
    #[error(
        "SETTINGS_ENABLE_PUSH={0}, which a server may not send (RFC 9113 6.5.2 allows it only 0)"
    )]
    EnablePush(u32),
    /// Windows are at most 2^31-1 bytes.
    #[error("SETTINGS_INITIAL_WINDOW_SIZE={0}, over the largest window 2147483647 (2^31-1)")]
    InitialWindow(u32),
    /// Frames are 16,384 to 16,777,215 bytes.
    #[error("SETTINGS_MAX_FRAME_SIZE={0}, outside 16384..=16777215")]
    MaxFrameSize(u32),
    /// A flag setting of neither 0 nor 1.
    #[error("SETTINGS_ENABLE_CONNECT_PROTOCOL={0}, neither 0 nor 1")]
    ConnectProtocol(u32),
    /// Each setting is 6 bytes.
    #[error("a SETTINGS frame of {0} bytes, not a multiple of 6")]
    Length(usize),
}

impl SettingsFault {
    /// The HTTP/2 error code a client closes the connection with.
    pub fn code(&self) -> u32 {
        match self {
            SettingsFault::InitialWindow(_) => 0x3, // FLOW_CONTROL_ERROR
            SettingsFault::Length(_) => 0x6,        // FRAME_SIZE_ERROR
            _ => 0x1,                               // PROTOCOL_ERROR
        }
    }
}

/// What one connection's server side showed, shared with its users.
#[derive(Debug)]
pub struct Seen {
    settings: AtomicBool,
    max_header_list: AtomicU32,
    fault: OnceLock<SettingsFault>,
}

impl Default for Seen {
    fn default() -> Seen {
        Seen {
            settings: AtomicBool::new(false),
            max_header_list: AtomicU32::new(u32::MAX),
            fault: OnceLock::new(),
        }
    }
}

impl Seen {
    /// A SETTINGS frame of the server's arrived: it speaks HTTP/2.
    pub fn settings_arrived(&self) -> bool {
        self.settings.load(Relaxed)
    }

    /// SETTINGS_MAX_HEADER_LIST_SIZE (unlimited until the server says).
    pub fn max_header_list(&self) -> u32 {
        self.max_header_list.load(Relaxed)
    }

    /// The SETTINGS value that closed the connection, if one did.
    pub fn fault(&self) -> Option<&SettingsFault> {
        self.fault.get()
    }
}

/// Where the scan of the server's bytes is.
#[derive(Default)]
struct Scan {
    /// The frame header being read.
    head: [u8; 9],
    filled: usize,
    /// Bytes of the current frame's payload still to pass.
    left: usize,
    /// The payload of a SETTINGS frame being read (others are skipped).
    settings: Option<Vec<u8>>,
}

/// A stream whose incoming bytes are scanned as HTTP/2 frames.
pub struct Watched<S> {
    inner: S,
    scan: Scan,
    seen: Arc<Seen>,
}

impl<S> Watched<S> {
    /// Watch `inner`; the returned [`Seen`] fills as its bytes are read.
    pub fn new(inner: S) -> (Watched<S>, Arc<Seen>) {
        let seen = Arc::new(Seen::default());
        let w = Watched {
            inner,
            scan: Scan::default(),
            seen: seen.clone(),
        };
        (w, seen)
    }

    /// Scan `bytes`; a fault is kept and returned.
    fn scan(&mut self, mut bytes: &[u8]) -> Result<(), SettingsFault> {
        let (scan, seen) = (&mut self.scan, &*self.seen);
        while !bytes.is_empty() {
            if scan.left > 0 {
                let take = scan.left.min(bytes.len());
                if let Some(s) = &mut scan.settings {
                    s.extend_from_slice(&bytes[..take]);
                }
                (scan.left, bytes) = (scan.left - take, &bytes[take..]);
            } else {
                let take = (9 - scan.filled).min(bytes.len());
                scan.head[scan.filled..scan.filled + take].copy_from_slice(&bytes[..take]);
                (scan.filled, bytes) = (scan.filled + take, &bytes[take..]);
                if scan.filled == 9 {
                    scan.filled = 0;
                    let h = scan.head;
                    scan.left = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
                    let settings = h[3] == 4 && h[4] & 1 == 0 && scan.left <= MAX_SETTINGS;
                    scan.settings = settings.then(|| Vec::with_capacity(scan.left));
                }
            }
            if scan.left == 0 {
                if let Some(payload) = scan.settings.take() {
                    seen.settings.store(true, Relaxed);
                    if let Err(f) = apply(&payload, seen) {
                        let _ = seen.fault.set(f.clone());
                        return Err(f);
                    }
                }
            }
        }
        Ok(())
    }
}

/// The largest SETTINGS frame read (a longer one is left to `h2`, which
/// refuses frames over 16 KiB).
const MAX_SETTINGS: usize = 16_384;

/// Check one SETTINGS frame's values and note the header list limit.
fn apply(payload: &[u8], seen: &Seen) -> Result<(), SettingsFault> {
    if !payload.len().is_multiple_of(6) {
        return Err(SettingsFault::Length(payload.len()));
    }
    for s in payload.chunks_exact(6) {
        let id = u16::from_be_bytes([s[0], s[1]]);
        let v = u32::from_be_bytes([s[2], s[3], s[4], s[5]]);
        match id {
            0x2 if v != 0 => return Err(SettingsFault::EnablePush(v)),
            0x4 if v > (1 << 31) - 1 => return Err(SettingsFault::InitialWindow(v)),
            0x5 if !(16_384..=16_777_215).contains(&v) => {
                return Err(SettingsFault::MaxFrameSize(v))
            }
            0x6 => seen.max_header_list.store(v, Relaxed),
            0x8 if v > 1 => return Err(SettingsFault::ConnectProtocol(v)),
            _ => {}
        }
    }
    Ok(())
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = read {
            let this = &mut *self;
            if let Err(f) = this.scan(&buf.filled()[before..]) {
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, f)));
            }
        }
        read
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(u16, u32)]) -> Vec<u8> {
        let mut p = Vec::new();
        for (id, v) in pairs {
            p.extend_from_slice(&id.to_be_bytes());
            p.extend_from_slice(&v.to_be_bytes());
        }
        let len = p.len() as u32;
        let mut f = vec![
            (len >> 16) as u8,
            (len >> 8) as u8,
            len as u8,
            4,
            0,
            0,
            0,
            0,
            0,
        ];
        f.extend_from_slice(&p);
        f
    }

    #[test]
    fn settings_are_read_across_pieces_and_faults_named() {
        let (mut w, seen) = Watched::new(());
        let mut bytes = vec![0, 0, 3, 0, 1, 0, 0, 0, 1, b'a', b'b', b'c'];
        bytes.extend(settings(&[(0x6, 100), (0x3, 10)]));
        for b in bytes.chunks(2) {
            assert_eq!(w.scan(b), Ok(()));
        }
        assert!(seen.settings_arrived());
        assert_eq!(seen.max_header_list(), 100);
        let bad = settings(&[(0x4, 1 << 31)]);
        assert_eq!(w.scan(&bad), Err(SettingsFault::InitialWindow(1 << 31)));
        assert_eq!(seen.fault().map(SettingsFault::code), Some(3));
        let (mut w, seen) = Watched::new(());
        let _ = w.scan(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        assert!(!seen.settings_arrived());
    }
}
