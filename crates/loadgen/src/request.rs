//! One request's life on a worker's connection slot: connect if needed, send,
//! read, classify, record; sent again once on a new connection when a reused
//! one closed before any byte of its answer ([`crate::retry`]). Shared by the
//! open and closed loops.

use std::cell::RefCell;
use std::rc::Rc;

use crate::clock::now_ns;
use crate::http::{Answer, Conn, Failed};
use crate::recorder::{ErrorClass, Recorder};
use crate::retry::should_retry;
use crate::run_ctx::RunCtx;

/// A worker's connection: its own HTTP/1.1 one (kept between requests),
/// or its share of an HTTP/2 connection (see [`crate::h2::conn`]).
pub enum Slot {
    Http1(Option<Conn>),
    Http2(Rc<crate::h2::conn::Shared>),
}

impl Slot {
    /// A new worker's slot: on the next HTTP/2 connection of `pool`, else
    /// an HTTP/1.1 connection of its own.
    pub fn new(pool: Option<&crate::h2::conn::Pool>) -> Slot {
        match pool {
            Some(pool) => Slot::Http2(pool.assign()),
            None => Slot::Http1(None),
        }
    }
}

/// Send one request due at `intended_ns` that must complete by `deadline_ns`.
/// `slot` keeps the worker's connection between requests (keep-alive mode).
/// Returns what was recorded: the status, or the failure's class.
pub async fn request(
    slot: &mut Slot,
    ctx: &RunCtx,
    rec: &RefCell<Recorder>,
    intended_ns: u64,
    deadline_ns: u64,
    track_lag: bool,
) -> Result<u16, ErrorClass> {
    let sent_ns = now_ns();
    rec.borrow_mut().sent(intended_ns, sent_ns, track_lag);
    // The request's index is taken here, so its endpoint is known (a
    // replayed mix); HTTP/2 takes its head in turn below.
    let index = matches!(slot, Slot::Http1(_)).then(|| ctx.next_index());
    let work = async {
        match slot {
            Slot::Http1(slot) => {
                let request = &ctx.requests[index.unwrap_or(0)];
                let mut retried = false;
                loop {
                    let tried = attempt(slot, ctx, request).await;
                    match tried {
                        Err(f) if should_retry(request, f.class, f.idle_close, retried) => {
                            retried = true;
                            *slot = None;
                            rec.borrow_mut().retried();
                        }
                        tried => return tried.map_err(|f| f.class),
                    }
                }
            }
            Slot::Http2(conn) => match ctx.next_head() {
                Some(head) => crate::h2::exchange::exchange(conn, &ctx.dial, head).await,
                None => Err(ErrorClass::ConnectOther),
            },
        }
    };
    let ended = tokio::time::timeout_at(ctx.clock.tokio_instant(deadline_ns), work)
        .await
        .ok();
    let done_ns = now_ns();
    let reusable = matches!(&ended, Some(Ok(a)) if a.reusable);
    let unclean = matches!(slot, Slot::Http1(Some(c)) if c.unclean_tls_close());
    if let Slot::Http1(slot) = slot {
        if !reusable || ctx.new_connection {
            *slot = None;
        }
    }
    let outcome = outcome(ended, done_ns, deadline_ns);
    let mut r = rec.borrow_mut();
    if unclean && outcome.is_ok() {
        r.unclean_tls_close();
    }
    r.done(intended_ns, sent_ns, done_ns, outcome);
    r.endpoint_done(
        index.and_then(|i| ctx.endpoint(i)),
        intended_ns,
        done_ns,
        outcome,
    );
    drop(r);
    outcome
}

/// One try: connect if the slot has no connection, send, read.
async fn attempt(slot: &mut Option<Conn>, ctx: &RunCtx, request: &[u8]) -> Result<Answer, Failed> {
    if slot.is_none() {
        let d = &ctx.dial;
        let conn = Conn::connect(d.addr, d.sources.pick(), d.tls.as_ref(), d.limits).await?;
        *slot = Some(conn);
    }
    match slot.as_mut() {
        Some(conn) => conn.exchange(request).await,
        None => Err(ErrorClass::ConnectOther.into()),
    }
}

/// What a finished request counts as: its status or failure class, except
/// that whatever ended past the deadline is a timeout (no complete answer by
/// then), whichever future the runtime polled first: tokio's timer is
/// millisecond grained and a busy event loop notices it late. `ended` is
/// `None` when the timer fired first.
pub(crate) fn outcome(
    ended: Option<Result<Answer, ErrorClass>>,
    done_ns: u64,
    deadline_ns: u64,
) -> Result<u16, ErrorClass> {
    match ended {
        Some(_) if done_ns > deadline_ns => Err(ErrorClass::Timeout),
        Some(Ok(answer)) => Ok(answer.status),
        Some(Err(class)) => Err(class),
        None => Err(ErrorClass::Timeout),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16, finding 5: 496 "ok" answers arrived after a 2 s timeout.
    #[test]
    fn r16_05_an_answer_after_the_timeout_is_a_timeout() {
        let ok = || {
            Some(Ok(Answer {
                status: 200,
                reusable: true,
            }))
        };
        assert_eq!(outcome(ok(), 2_000, 2_000), Ok(200));
        assert_eq!(outcome(ok(), 2_001, 2_000), Err(ErrorClass::Timeout));
        let reset = Some(Err(ErrorClass::Reset));
        assert_eq!(outcome(reset, 10, 20), Err(ErrorClass::Reset));
        assert_eq!(outcome(reset, 30, 20), Err(ErrorClass::Timeout));
        assert_eq!(outcome(None, 20, 20), Err(ErrorClass::Timeout));
    }
}
