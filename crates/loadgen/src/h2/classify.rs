//! What an HTTP/2 failure counts as: the `h2` crate's error (a reset, a
//! GOAWAY, a fault it found in the server's frames, or the socket's own
//! error) mapped onto one [`ErrorClass`].
//!
//! - a stream the server reset: `refused_stream` for REFUSED_STREAM (not
//!   processed, safe to retry), else `stream_reset` with its code;
//! - a stream past the last one a graceful GOAWAY (NO_ERROR) named:
//!   `goaway` (refused, not processed);
//! - a GOAWAY with an error code, or a frame or setting the client found
//!   broken (h2 then resets the stream or closes the connection itself):
//!   `protocol_error` with its code;
//! - an answer's head over the client's 1 MiB (h2 refuses the stream
//!   itself, with REFUSED_STREAM): `read`, as over HTTP/1.1;
//! - a socket error: as over HTTP/1.1 (`reset`, `read`).

use h2::Reason;

use crate::http::io_class;
use crate::recorder::ErrorClass;

/// The class of a failed HTTP/2 request.
pub fn class(e: &h2::Error) -> ErrorClass {
    if let Some(io) = e.get_io() {
        return io_class(io);
    }
    let Some(reason) = e.reason() else {
        // The client's own misuse of a closed connection (h2's "user
        // error"): the connection was gone before the request left.
        return ErrorClass::Reset;
    };
    let code = u32::from(reason);
    if e.is_reset() && e.is_library() && reason == Reason::REFUSED_STREAM {
        return ErrorClass::Read;
    }
    if e.is_reset() && e.is_remote() {
        return match reason {
            Reason::REFUSED_STREAM => ErrorClass::RefusedStream,
            _ => ErrorClass::StreamReset(code),
        };
    }
    if e.is_go_away() && e.is_remote() && reason == Reason::NO_ERROR {
        return ErrorClass::Goaway;
    }
    ErrorClass::ProtocolError(code)
}

/// A graceful GOAWAY met before the request left: the connection is
/// closing, so a new one may carry the request (no byte of it was sent).
pub fn is_graceful_close(e: &h2::Error) -> bool {
    e.is_go_away() && e.reason() == Some(Reason::NO_ERROR)
}
