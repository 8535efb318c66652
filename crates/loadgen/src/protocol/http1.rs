//! HTTP/1.1 behind [`super::Exchange`]: a worker's own keep-alive
//! connection, its request taken by index (a replayed mix's endpoint is
//! known), sent again once on a new connection when a reused one closed
//! before any byte of its answer ([`crate::retry`]).

use std::cell::RefCell;

use crate::http::{Answer, Conn, Failed};
use crate::recorder::{ErrorClass, Recorder};
use crate::retry::should_retry;
use crate::run_ctx::RunCtx;

/// A worker's HTTP/1.1 connection (`None` until its first request, and
/// after one that cannot be reused).
#[derive(Default)]
pub struct Worker(Option<Conn>);

impl super::Exchange for Worker {
    fn next_index(&self, ctx: &RunCtx) -> Option<usize> {
        Some(ctx.next_index())
    }

    async fn exchange(
        &mut self,
        ctx: &RunCtx,
        rec: &RefCell<Recorder>,
        index: Option<usize>,
    ) -> Result<Answer, ErrorClass> {
        let request = &ctx.requests[index.unwrap_or(0)];
        let mut retried = false;
        loop {
            let tried = attempt(&mut self.0, ctx, request).await;
            match tried {
                Err(f) if should_retry(request, f.class, f.idle_close, retried) => {
                    retried = true;
                    self.0 = None;
                    rec.borrow_mut().retried();
                }
                tried => return tried.map_err(|f| f.class),
            }
        }
    }

    fn after(&mut self, ctx: &RunCtx, reusable: bool) -> bool {
        let unclean = self.0.as_ref().is_some_and(|c| c.unclean_tls_close());
        if !reusable || ctx.new_connection {
            self.0 = None;
        }
        unclean
    }
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
