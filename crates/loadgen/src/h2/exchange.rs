//! One request on a shared HTTP/2 connection: wait for a free stream (the
//! server's SETTINGS_MAX_CONCURRENT_STREAMS; the wait is on the clock),
//! send the head and body, read the answer to its end by the rules of
//! [`super::answer`] (releasing the flow control window as it goes) and,
//! for a gRPC call, its `grpc-status`.

use std::rc::Rc;

use bytes::Bytes;
use h2::client::SendRequest;

use super::answer::{drain, final_head, grpc_code, Failed, Framing};
use super::classify::{class, is_graceful_close};
use super::conn::{Live, Shared};
use super::head::Head;
use crate::dial::Dial;
use crate::http::Answer;
use crate::recorder::ErrorClass;

/// Send `head` on `conn` and read the whole answer.
pub async fn exchange(conn: &Rc<Shared>, dial: &Dial, head: &Head) -> Result<Answer, ErrorClass> {
    let (live, mut send) = ready(conn, dial).await?;
    if head.list_size() > u64::from(live.seen.max_header_list()) {
        // The server's SETTINGS_MAX_HEADER_LIST_SIZE leaves no room for
        // this head: not written, as Go's client refuses it (issue 49,
        // finding 2).
        return Err(ErrorClass::ProtocolError(u32::from(
            h2::Reason::PROTOCOL_ERROR,
        )));
    }
    let fail = |f: Failed| failed(conn, &live, f);
    let end_now = head.body.is_empty();
    let (answer, mut body) = send
        .send_request(head.request(), end_now)
        .map_err(|e| fail(e.into()))?;
    if !end_now {
        body.send_data(head.body.clone(), true)
            .map_err(|e| fail(e.into()))?;
    }
    let answer = final_head(answer, dial.limits.max_headers)
        .await
        .map_err(fail)?;
    conn.note_limit(&send);
    let (parts, stream) = answer.into_parts();
    let status = parts.status.as_u16();
    let grpc = head.grpc && status == 200;
    let framing = grpc.then(|| Framing::of(&parts.headers));
    let trailers = drain(stream, framing).await.map_err(fail)?;
    if grpc {
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
async fn ready(conn: &Rc<Shared>, dial: &Dial) -> Result<(Live, SendRequest<Bytes>), ErrorClass> {
    let mut retried = false;
    loop {
        let live = conn.sender(dial).await?;
        match live.send.clone().ready().await {
            Ok(send) => return Ok((live, send)),
            Err(e) => {
                conn.forget(live.generation);
                if retried || !is_graceful_close(&e) {
                    return Err(failed(conn, &live, e.into()));
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
fn failed(conn: &Shared, live: &Live, f: Failed) -> ErrorClass {
    if let Some(fault) = live.seen.fault() {
        conn.forget(live.generation);
        return ErrorClass::ProtocolError(fault.code());
    }
    if let Failed::H2(e) = &f {
        if e.is_go_away() || e.is_io() {
            conn.forget(live.generation);
        }
        return class(e);
    }
    f.class()
}
