//! One request's life on a worker's connection slot: connect if needed, send,
//! read, classify, record. Shared by the open and closed loops.

use std::cell::RefCell;

use crate::clock::now_ns;
use crate::generator::RunCtx;
use crate::http::Conn;
use crate::recorder::{ErrorClass, Recorder};

/// Send one request due at `intended_ns` that must complete by `deadline_ns`.
/// `slot` keeps the worker's connection between requests (keep-alive mode).
pub async fn request(
    slot: &mut Option<Conn>,
    ctx: &RunCtx,
    rec: &RefCell<Recorder>,
    intended_ns: u64,
    deadline_ns: u64,
    track_lag: bool,
) {
    let sent_ns = now_ns();
    rec.borrow_mut().sent(intended_ns, sent_ns, track_lag);
    let work = async {
        if slot.is_none() {
            *slot = Some(Conn::connect(ctx.addr, ctx.tls.as_ref()).await?);
        }
        match slot.as_mut() {
            Some(conn) => conn.exchange(ctx.next_request()).await,
            None => Err(ErrorClass::ConnectOther),
        }
    };
    let res = tokio::time::timeout_at(ctx.clock.tokio_instant(deadline_ns), work).await;
    let outcome = match res {
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
        .done(intended_ns, sent_ns, now_ns(), outcome);
}
