//! `loop-blocking`: the event loop whose handler runs every step *blocking*
//! on the worker thread that polls it (`std::thread::sleep`, blocking
//! clients): the `suspend fun` + `Thread.sleep` mistake, made on purpose.
//! While a step runs, that worker serves nothing else; `par(...)` children
//! run one after another, since the worker is the only thread it has.

use std::sync::Arc;

use iolab_model::Step;

use crate::ctx::Ctx;
use crate::event_loop::{AsyncSteps, BoxFuture};
use crate::exec::{run_blocking, InOrder, StepResult};

/// Runs steps blocking, inside the future's `poll`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoopBlocking;

impl AsyncSteps for LoopBlocking {
    fn run<'a>(&'a self, ctx: &'a Arc<Ctx>, step: &'a Step) -> BoxFuture<'a, StepResult> {
        Box::pin(
            async move { iolab_spans::running(|| run_blocking(step, &ctx.backends, &InOrder)) },
        )
    }
}
