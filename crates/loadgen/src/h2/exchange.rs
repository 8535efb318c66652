//! One request on a shared HTTP/2 connection: wait for a free stream (the
//! server's SETTINGS_MAX_CONCURRENT_STREAMS; the wait is on the clock),
//! send the head and body, read the answer to its end (releasing the flow
//! control window as it goes) and, for a gRPC call, its `grpc-status`.

use std::rc::Rc;

use bytes::Bytes;
use h2::client::SendRequest;
use h2::RecvStream;
use http::HeaderMap;

use super::classify::{class, is_graceful_close};
use super::conn::{Live, Shared};
use super::head::Head;
use crate::http::Answer;
use crate::recorder::ErrorClass;
use crate::run_ctx::RunCtx;

/// gRPC's INTERNAL: what a client makes of an answer with no `grpc-status`.
const GRPC_INTERNAL: u32 = 13;

/// Send `head` on `conn` and read the whole answer.
pub async fn exchange(conn: &Rc<Shared>, ctx: &RunCtx, head: &Head) -> Result<Answer, ErrorClass> {
    let (live, mut send) = ready(conn, ctx).await?;
    if head.list_size() > u64::from(live.seen.max_header_list()) {
        // The server's SETTINGS_MAX_HEADER_LIST_SIZE leaves no room for
        // this head: not written, as Go's client refuses it (issue 49,
        // finding 2).
        return Err(ErrorClass::ProtocolError(u32::from(
            h2::Reason::PROTOCOL_ERROR,
        )));
    }
    let fail = |e: h2::Error| failed(conn, &live, &e);
    let end_now = head.body.is_empty();
    let (answer, mut body) = send.send_request(head.request(), end_now).map_err(fail)?;
    if !end_now {
        body.send_data(head.body.clone(), true).map_err(fail)?;
    }
    let answer = answer.await.map_err(fail)?;
    conn.note_limit(&send);
    let (parts, stream) = answer.into_parts();
    let status = parts.status.as_u16();
    let trailers = drain(stream).await.map_err(fail)?;
    if head.grpc && status == 200 {
        let code = grpc_code(&parts.headers, trailers.as_ref());
        if code != 0 {
            return Err(ErrorClass::GrpcStatus(code));
        }
    }
    Ok(Answer {
        status,
        reusable: true,
    })
}

/// The connection, ready for a new stream. One that began closing
/// gracefully (GOAWAY, NO_ERROR) before this request left may be
/// replaced once: nothing was sent.
async fn ready(conn: &Rc<Shared>, ctx: &RunCtx) -> Result<(Live, SendRequest<Bytes>), ErrorClass> {
    let mut retried = false;
    loop {
        let live = conn.sender(ctx).await?;
        match live.send.clone().ready().await {
            Ok(send) => return Ok((live, send)),
            Err(e) => {
                conn.forget(live.generation);
                if retried || !is_graceful_close(&e) {
                    return Err(failed(conn, &live, &e));
                }
                retried = true;
            }
        }
    }
}

/// Classify `f`: a SETTINGS value the client refused is a
/// `protocol_error` whatever `h2` then made of the closed connection; a
/// connection that failed as a whole is forgotten, so the next request
/// opens a new one.
fn failed(conn: &Shared, live: &Live, e: &h2::Error) -> ErrorClass {
    if let Some(fault) = live.seen.fault() {
        conn.forget(live.generation);
        return ErrorClass::ProtocolError(fault.code());
    }
    if e.is_go_away() || e.is_io() {
        conn.forget(live.generation);
    }
    class(e)
}

/// Read the body to its end, giving its bytes back to flow control; the
/// trailers, if any.
async fn drain(mut stream: RecvStream) -> Result<Option<HeaderMap>, h2::Error> {
    while let Some(chunk) = stream.data().await {
        let chunk = chunk?;
        let _ = stream.flow_control().release_capacity(chunk.len());
    }
    stream.trailers().await
}

/// `grpc-status` from the trailers, or from the head of a trailers-only
/// answer; missing or unreadable: INTERNAL.
fn grpc_code(head: &HeaderMap, trailers: Option<&HeaderMap>) -> u32 {
    trailers
        .and_then(|t| t.get("grpc-status"))
        .or_else(|| head.get("grpc-status"))
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(GRPC_INTERNAL)
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
}
