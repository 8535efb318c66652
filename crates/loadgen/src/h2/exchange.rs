//! One request on a shared HTTP/2 connection: wait for a free stream (the
//! server's SETTINGS_MAX_CONCURRENT_STREAMS; the wait is on the clock),
//! send the head and body, read the answer to its end (releasing the flow
//! control window as it goes) and, for a gRPC call, its `grpc-status`.

use std::rc::Rc;

use h2::RecvStream;
use http::HeaderMap;

use super::classify::{class, is_graceful_close};
use super::conn::Shared;
use super::head::Head;
use crate::http::Answer;
use crate::recorder::ErrorClass;
use crate::run_ctx::RunCtx;

/// gRPC's INTERNAL: what a client makes of an answer with no `grpc-status`.
const GRPC_INTERNAL: u32 = 13;

/// Send `head` on `conn` and read the whole answer.
pub async fn exchange(conn: &Rc<Shared>, ctx: &RunCtx, head: &Head) -> Result<Answer, ErrorClass> {
    // A connection that began closing gracefully (GOAWAY, NO_ERROR)
    // before this request left may be replaced once: nothing was sent.
    let mut retried = false;
    let (send, generation) = loop {
        let send = conn.sender(ctx).await?;
        let generation = conn.generation();
        match send.ready().await {
            Ok(send) => break (send, generation),
            Err(e) => {
                conn.forget(generation);
                if retried || !is_graceful_close(&e) {
                    return Err(class(&e));
                }
                retried = true;
            }
        }
    };
    let mut send = send;
    let end_now = head.body.is_empty();
    let (answer, mut body) = send
        .send_request(head.request(), end_now)
        .map_err(|e| fail(conn, generation, &e))?;
    if !end_now {
        body.send_data(head.body.clone(), true)
            .map_err(|e| fail(conn, generation, &e))?;
    }
    let answer = answer.await.map_err(|e| fail(conn, generation, &e))?;
    conn.note_limit(&send);
    let (parts, stream) = answer.into_parts();
    let status = parts.status.as_u16();
    let trailers = drain(stream)
        .await
        .map_err(|e| fail(conn, generation, &e))?;
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

/// Classify `e`; a connection that failed as a whole is forgotten, so
/// the next request opens a new one.
fn fail(conn: &Shared, generation: u64, e: &h2::Error) -> ErrorClass {
    if e.is_go_away() || e.is_io() {
        conn.forget(generation);
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
