//! `loop-async`: an event loop of `workers` threads (tokio default: cores)
//! where an IO task is a timer, so no thread is held while it waits (E3's
//! scheduled promise; Kotlin's `delay`).

use iolab_model::ModelParams;

use crate::event_loop::{self, IoStyle};
use crate::{Ctx, Outcome};

pub(crate) fn run(ctx: &Ctx, params: &ModelParams) -> Outcome {
    event_loop::run(ctx, params.workers(ctx.cores), 1, IoStyle::Timer)
}
