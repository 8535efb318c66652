//! `loop-async`: the event loop with truly non-blocking steps. IO leaves are
//! futures (tokio timers, async clients) that hold no thread while they
//! wait; the steps around them are the shared [`walk`]: `par(...)` joins its
//! children's futures on the request's own task, `cpu` runs on the worker.

use std::sync::Arc;

use iolab_model::{IoCall, Step};

use crate::ctx::Ctx;
use crate::event_loop::{walk, AsyncSteps, BoxFuture, ServeIo};
use crate::exec::StepResult;

/// Runs steps as futures.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoopAsync;

impl LoopAsync {
    /// The executor for one server.
    pub fn new(_ctx: &Arc<Ctx>) -> Self {
        LoopAsync
    }
}

impl ServeIo for LoopAsync {
    fn io<'a>(&'a self, ctx: &'a Arc<Ctx>, call: &'a IoCall) -> BoxFuture<'a, StepResult> {
        Box::pin(async move { Ok(iolab_spans::free(ctx.backends.fetch_async(call)).await?) })
    }
}

impl AsyncSteps for LoopAsync {
    fn run<'a>(&'a self, ctx: &'a Arc<Ctx>, step: &'a Step) -> BoxFuture<'a, StepResult> {
        walk(self, ctx, step)
    }
}
