//! One request's life on a worker's connection slot: connect if needed, send,
//! read, classify, record. Shared by the open and closed loops.

use std::cell::RefCell;

use crate::clock::now_ns;
use crate::generator::RunCtx;
use crate::http::Conn;
use crate::recorder::{ErrorClass, Recorder};

/// Send one request due at `intended_ns` that must complete by `deadline_ns`.
/// `slot` keeps the worker's connection between requests (keep-alive mode).
/// Returns what was recorded: the status, or the failure's class.
pub async fn request(
    slot: &mut Option<Conn>,
    ctx: &RunCtx,
    rec: &RefCell<Recorder>,
    intended_ns: u64,
    deadline_ns: u64,
    track_lag: bool,
) -> Result<u16, ErrorClass> {
    let sent_ns = now_ns();
    rec.borrow_mut().sent(intended_ns, sent_ns, track_lag);
    let work = async {
        if slot.is_none() {
            *slot = Some(Conn::connect(ctx.addr).await?);
        }
        match slot.as_mut() {
            Some(conn) => conn.exchange(&ctx.request).await,
            None => Err(ErrorClass::ConnectOther),
        }
    };
    let res = tokio::time::timeout_at(ctx.clock.tokio_instant(deadline_ns), work).await;
    let done_ns = now_ns();
    let outcome = match res {
        // Whatever ended past the deadline is a timeout (no complete answer
        // by then), whichever future the runtime polled first: tokio's timer
        // is millisecond grained and a busy event loop notices it late.
        Ok(r) if done_ns > deadline_ns => {
            if !r.is_ok_and(|a| a.reusable) || ctx.new_connection {
                *slot = None;
            }
            Err(ErrorClass::Timeout)
        }
        Ok(Ok(answer)) => {
            if !answer.reusable || ctx.new_connection {
                *slot = None;
            }
            Ok(answer.status)
        }
        Ok(Err(class)) => {
            *slot = None;
            Err(class)
        }
        Err(_) => {
            *slot = None;
            Err(ErrorClass::Timeout)
        }
    };
    rec.borrow_mut()
        .done(intended_ns, sent_ns, done_ns, outcome);
    outcome
}
