//! The one retry the generator makes, as the most trusted clients make it.
//!
//! A kept-alive connection that the server closes while idle (nginx's
//! `keepalive_timeout`, iolab's own servers after 20 s) is ordinary; a
//! request written into it as it closes fails before any byte of its answer
//! through no fault of the service. Go's net/http (`shouldRetryRequest`)
//! retries such a request on a new connection when the connection was
//! reused, nothing of the answer came, and the request can be replayed (an
//! idempotent method, or an `Idempotency-Key` header); curl retries a
//! request on a reused connection that died before any byte; hyper's pool
//! retries one the connection closed before it was written. iolab takes
//! Go's rule, once per request:
//!
//! - the connection had carried at least one complete answer (a fresh
//!   connection that closes is the service's doing: never retried);
//! - no byte of this answer came (an interim `100` counts as a byte);
//! - the failure is the peer's close or reset, not a timeout or a
//!   malformed answer;
//! - the request is idempotent by RFC 9110 (GET, HEAD, OPTIONS, TRACE,
//!   PUT, DELETE) or carries `Idempotency-Key` / `X-Idempotency-Key`.
//!
//! The retry is the same request, on a new connection, within the same
//! deadline; it is counted once in `sent` and its outcome once in its class,
//! and besides in `retried`. Latency still runs from the intended send time.

use crate::recorder::ErrorClass;

/// Whether a request that failed with `class`, on a connection that closed
/// before any byte of its answer after carrying others (`idle_close`), is
/// sent again on a new connection. `retried`: it was already, once.
pub fn should_retry(request: &[u8], class: ErrorClass, idle_close: bool, retried: bool) -> bool {
    !retried && idle_close && class == ErrorClass::Reset && idempotent(request)
}

/// RFC 9110's idempotent methods, or a request marked with an idempotency key.
pub fn idempotent(request: &[u8]) -> bool {
    const METHODS: [&[u8]; 6] = [
        b"GET ",
        b"HEAD ",
        b"OPTIONS ",
        b"TRACE ",
        b"PUT ",
        b"DELETE ",
    ];
    if METHODS.iter().any(|m| request.starts_with(m)) {
        return true;
    }
    let head_end = request
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(request.len());
    request[..head_end]
        .split(|&b| b == b'\n')
        .skip(1)
        .any(|line| {
            let name = line.split(|&b| b == b':').next().unwrap_or_default();
            name.eq_ignore_ascii_case(b"idempotency-key")
                || name.eq_ignore_ascii_case(b"x-idempotency-key")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_idempotent_request_closed_idle_is_retried_once() {
        let get = b"GET / HTTP/1.1\r\nHost: h\r\n\r\n";
        let post = b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx";
        let keyed = b"POST / HTTP/1.1\r\nIdempotency-Key: 7\r\n\r\n";
        assert!(should_retry(get, ErrorClass::Reset, true, false));
        assert!(!should_retry(get, ErrorClass::Reset, true, true), "once");
        assert!(
            !should_retry(get, ErrorClass::Reset, false, false),
            "fresh or answered"
        );
        assert!(!should_retry(get, ErrorClass::Timeout, true, false));
        assert!(!should_retry(get, ErrorClass::Read, true, false));
        assert!(!should_retry(post, ErrorClass::Reset, true, false));
        assert!(should_retry(keyed, ErrorClass::Reset, true, false));
        assert!(idempotent(b"DELETE /x HTTP/1.1\r\n\r\n"));
        assert!(!idempotent(b"PATCH /x HTTP/1.1\r\nX-Key: 1\r\n\r\n"));
        // A header named in the body is no header.
        assert!(!idempotent(b"POST / HTTP/1.1\r\n\r\nIdempotency-Key: 1"));
    }
}
