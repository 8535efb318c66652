//! An HTTP/2 answer read by the rules an HTTP/1.1 answer is read by
//! (docs/reliability.md, "Answers the generator reads"), so `--http2` does
//! not accept what HTTP/1.1 would count a `read`: at most 32 interim (1xx)
//! heads before the final one and at most `--max-headers` headers in it
//! (`h2` itself caps the head's bytes, at 1 MiB as HTTP/1.1's, see
//! [`super::conn::open`]); and a gRPC answer's body held to gRPC's
//! framing, each message a 5-byte prefix (compressed flag, length) and its
//! bytes, checked as the bytes pass (issue 49, findings 4 and 6).

use h2::client::ResponseFuture;
use h2::RecvStream;
use http::{HeaderMap, Response};

use crate::recorder::ErrorClass;
use crate::response::MAX_INTERIM;

/// gRPC's default limit on a message received (grpc-go, grpc-java,
/// grpcio): a prefix announcing more is refused at once, not waited for.
pub const MAX_GRPC_MESSAGE: u32 = 4 << 20;

/// Why an answer was not read: `h2`'s error, or a rule the answer broke
/// (each a `read`, a malformed answer).
#[derive(Debug, thiserror::Error)]
pub enum Failed {
    #[error("{0}")]
    H2(h2::Error),
    #[error("more than {MAX_INTERIM} interim (1xx) answers before the final one")]
    Interim,
    #[error("{0} headers, over the cap of {1} (--max-headers)")]
    Headers(usize, usize),
    #[error("a gRPC message {0}")]
    Grpc(&'static str),
}

impl From<h2::Error> for Failed {
    fn from(e: h2::Error) -> Failed {
        Failed::H2(e)
    }
}

/// The final answer to a request, its interim heads skipped, at most
/// [`MAX_INTERIM`] of them; its headers at most `max_headers`.
pub async fn final_head(
    mut answer: ResponseFuture,
    max_headers: usize,
) -> Result<Response<RecvStream>, Failed> {
    let mut interim = 0u32;
    while let Some(Ok(_)) = std::future::poll_fn(|cx| answer.poll_informational(cx)).await {
        interim += 1;
        if interim > MAX_INTERIM {
            return Err(Failed::Interim);
        }
    }
    let answer = answer.await?;
    match answer.headers().len() {
        n if n > max_headers => Err(Failed::Headers(n, max_headers)),
        _ => Ok(answer),
    }
}

/// Read the body to its end, giving its bytes back to flow control,
/// checking gRPC's framing when `grpc` is given; the trailers, if any.
pub async fn drain(
    mut stream: RecvStream,
    mut grpc: Option<Framing>,
) -> Result<Option<HeaderMap>, Failed> {
    while let Some(chunk) = stream.data().await {
        let chunk = chunk?;
        let _ = stream.flow_control().release_capacity(chunk.len());
        if let Some(f) = &mut grpc {
            f.feed(&chunk)?;
        }
    }
    if grpc.is_some_and(|f| f.mid_message()) {
        return Err(Failed::Grpc("was cut short: the body ended inside it"));
    }
    Ok(stream.trailers().await?)
}

/// Where a gRPC body is in its messages.
#[derive(Debug, Clone, Copy)]
pub struct Framing {
    prefix: [u8; 5],
    filled: usize,
    /// Bytes of the current message still to come.
    left: u32,
    /// `grpc-encoding` named a compression: a compressed message is allowed.
    compression: bool,
}

impl Framing {
    /// The framing of an answer whose head is `head`.
    pub fn of(head: &HeaderMap) -> Framing {
        let compression = head
            .get("grpc-encoding")
            .is_some_and(|v| !v.as_bytes().is_empty() && v.as_bytes() != b"identity");
        Framing {
            prefix: [0; 5],
            filled: 0,
            left: 0,
            compression,
        }
    }

    /// Take the next bytes of the body: a compressed message with no
    /// compression named, or one over [`MAX_GRPC_MESSAGE`], is a `read`.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<(), Failed> {
        while !bytes.is_empty() {
            if self.left > 0 {
                let take = (self.left as usize).min(bytes.len());
                self.left -= take as u32;
                bytes = &bytes[take..];
                continue;
            }
            let take = (5 - self.filled).min(bytes.len());
            self.prefix[self.filled..self.filled + take].copy_from_slice(&bytes[..take]);
            self.filled += take;
            bytes = &bytes[take..];
            if self.filled == 5 {
                let p = self.prefix;
                let len = u32::from_be_bytes([p[1], p[2], p[3], p[4]]);
                if p[0] > 1 {
                    return Err(Failed::Grpc("has a compressed flag neither 0 nor 1"));
                }
                if p[0] == 1 && !self.compression {
                    return Err(Failed::Grpc("came compressed with no grpc-encoding"));
                }
                if len > MAX_GRPC_MESSAGE {
                    return Err(Failed::Grpc("is over gRPC's 4 MiB limit"));
                }
                (self.filled, self.left) = (0, len);
            }
        }
        Ok(())
    }

    /// The body stopped inside a prefix or a message: it was cut short.
    pub fn mid_message(&self) -> bool {
        self.filled > 0 || self.left > 0
    }
}

/// gRPC's INTERNAL: what a client makes of an answer with no `grpc-status`.
pub const GRPC_INTERNAL: u32 = 13;

/// `grpc-status` from the trailers, or from the head of a trailers-only
/// answer; missing or unreadable: INTERNAL.
pub fn grpc_code(head: &HeaderMap, trailers: Option<&HeaderMap>) -> u32 {
    trailers
        .and_then(|t| t.get("grpc-status"))
        .or_else(|| head.get("grpc-status"))
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(GRPC_INTERNAL)
}

impl Failed {
    /// The class, `h2`'s errors by [`super::classify::class`].
    pub fn class(&self) -> ErrorClass {
        match self {
            Failed::H2(e) => super::classify::class(e),
            _ => ErrorClass::Read,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_status_comes_from_the_trailers_else_the_head_else_internal() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert("grpc-status", v.parse().unwrap());
            h
        };
        let none = HeaderMap::new();
        assert_eq!(grpc_code(&none, Some(&with("14"))), 14);
        assert_eq!(grpc_code(&with("5"), None), 5);
        assert_eq!(grpc_code(&with("5"), Some(&with("0"))), 0);
        assert_eq!(grpc_code(&none, None), GRPC_INTERNAL);
        assert_eq!(grpc_code(&with("x"), None), GRPC_INTERNAL);
    }

    #[test]
    fn grpc_framing_is_checked_across_pieces() {
        let plain = HeaderMap::new();
        let mut f = Framing::of(&plain);
        for piece in [&b"\0\0\0"[..], b"\0\x03a", b"bc\0\0\0\0\0"] {
            assert!(f.feed(piece).is_ok());
        }
        assert!(!f.mid_message());
        assert!(f.feed(b"\0\0\0\0\x05ab").is_ok() && f.mid_message());
        assert!(Framing::of(&plain).feed(b"\x01\0\0\0\0").is_err());
        assert!(Framing::of(&plain).feed(b"\0\xff\xff\xff\xff").is_err());
        let mut gzip = HeaderMap::new();
        gzip.insert("grpc-encoding", "gzip".parse().unwrap());
        assert!(Framing::of(&gzip).feed(b"\x01\0\0\0\0").is_ok());
    }
}
