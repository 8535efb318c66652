//! One request's life on a worker's connection slot: sent and read by its
//! protocol ([`crate::protocol::Exchange`]), bounded by its deadline,
//! classified and recorded. Shared by the open and closed loops.

use std::cell::RefCell;

use crate::clock::now_ns;
use crate::http::Answer;
use crate::protocol::{Exchange, Slot};
use crate::recorder::{ErrorClass, Recorder};
use crate::run_ctx::RunCtx;

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
    // The request's index is taken here where the protocol takes it before
    // sending, so its endpoint is known (a replayed mix).
    let index = slot.next_index(ctx);
    let work = slot.exchange(ctx, rec, index);
    let ended = tokio::time::timeout_at(ctx.clock.tokio_instant(deadline_ns), work)
        .await
        .ok();
    let done_ns = now_ns();
    let reusable = matches!(&ended, Some(Ok(a)) if a.reusable);
    let unclean = slot.after(ctx, reusable);
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
