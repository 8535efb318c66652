//! `loop-offload`: the event loop that sends every blocking IO leaf to a
//! bounded pool of `--offload` OS threads (default 64, Kotlin's
//! Dispatchers.IO) with an unbounded FIFO queue, and awaits the result
//! (`withContext(Dispatchers.IO)`, `supplyAsync`). The pool is tokio's
//! blocking pool capped at P threads. Each leaf of `par(...)` is its own
//! job, so a request can hold several pool threads; `cpu` stays on the loop
//! (the shared [`walk`]).

use std::sync::Arc;

use iolab_model::{IoCall, Step};

use crate::ctx::Ctx;
use crate::event_loop::{walk, AsyncSteps, BoxFuture, ServeIo};
use crate::exec::{StepError, StepResult};

/// Runs IO leaves on the offload pool.
#[derive(Debug, Clone, Copy)]
pub struct LoopOffload {
    threads: usize,
}

impl LoopOffload {
    /// The executor for one server (pool size from `--offload`).
    pub fn new(ctx: &Arc<Ctx>) -> Self {
        LoopOffload {
            threads: ctx.params.offload() as usize,
        }
    }
}

impl AsyncSteps for LoopOffload {
    fn configure(&self, runtime: &mut tokio::runtime::Builder) {
        runtime
            .max_blocking_threads(self.threads)
            .thread_stack_size(crate::THREAD_STACK);
    }

    fn run<'a>(&'a self, ctx: &'a Arc<Ctx>, step: &'a Step) -> BoxFuture<'a, StepResult> {
        walk(self, ctx, step)
    }
}

impl ServeIo for LoopOffload {
    fn io<'a>(&'a self, ctx: &'a Arc<Ctx>, call: &'a IoCall) -> BoxFuture<'a, StepResult> {
        Box::pin(async move {
            ctx.metrics.queue();
            let (job_ctx, call) = (ctx.clone(), call.clone());
            let tag = iolab_spans::current();
            let queued = tag.as_ref().map(|_| std::time::Instant::now());
            let job = tokio::task::spawn_blocking(move || {
                job_ctx.metrics.dequeue();
                crate::spans::offloaded(tag.as_ref(), queued, || {
                    job_ctx.backends.fetch_blocking(&call)
                })
            });
            match job.await {
                Ok(r) => Ok(r?),
                Err(e) => Err(StepError {
                    status: 500,
                    message: format!("offload job failed: {e}"),
                }),
            }
        })
    }
}
