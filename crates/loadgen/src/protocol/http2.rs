//! HTTP/2 (and gRPC unary calls over it) behind [`super::Exchange`]: a
//! worker's share of a pooled connection ([`crate::h2::conn`]); each
//! request's head taken in turn, its exchange [`crate::h2::exchange`].
//! The connection outlives a failed request; `h2` forgets a broken one.

use std::cell::RefCell;
use std::rc::Rc;

use crate::h2::conn::Shared;
use crate::http::Answer;
use crate::recorder::{ErrorClass, Recorder};
use crate::run_ctx::RunCtx;

/// A worker's share of an HTTP/2 connection.
pub struct Worker(Rc<Shared>);

impl Worker {
    pub fn new(conn: Rc<Shared>) -> Worker {
        Worker(conn)
    }
}

impl super::Exchange for Worker {
    fn next_index(&self, _: &RunCtx) -> Option<usize> {
        None
    }

    async fn exchange(
        &mut self,
        ctx: &RunCtx,
        _: &RefCell<Recorder>,
        _: Option<usize>,
    ) -> Result<Answer, ErrorClass> {
        match ctx.next_head() {
            Some(head) => crate::h2::exchange::exchange(&self.0, &ctx.dial, head).await,
            None => Err(ErrorClass::ConnectOther),
        }
    }

    fn after(&mut self, _: &RunCtx, _: bool) -> bool {
        false
    }
}
