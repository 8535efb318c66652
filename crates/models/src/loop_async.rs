//! `loop-async`: the event loop with truly non-blocking steps. IO leaves are
//! futures (tokio timers, async clients) that hold no thread while they
//! wait; `par(...)` joins its children's futures on the request's own task;
//! `cpu` runs on the worker, as on any event loop.

use std::sync::Arc;

use iolab_model::cpu::leibniz;
use iolab_model::Step;

use crate::ctx::Ctx;
use crate::event_loop::{join_all, AsyncSteps, BoxFuture};
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

impl AsyncSteps for LoopAsync {
    fn run<'a>(&'a self, ctx: &'a Arc<Ctx>, step: &'a Step) -> BoxFuture<'a, StepResult> {
        Box::pin(async move {
            match step {
                Step::Cpu { terms } => {
                    leibniz(*terms);
                    Ok(None)
                }
                Step::Io(call) => Ok(ctx.backends.fetch_async(call).await?),
                Step::Seq(children) => {
                    let mut last = None;
                    for child in children {
                        last = self.run(ctx, child).await?.or(last);
                    }
                    Ok(last)
                }
                Step::Par(children) => {
                    join_all(children.iter().map(|c| self.run(ctx, c)).collect()).await
                }
            }
        })
    }
}
