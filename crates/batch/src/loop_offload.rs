//! `loop-offload`: an event loop that moves each blocking call to a bounded
//! blocking pool of `offload` threads (Kotlin `Dispatchers.IO`: 64), so at
//! most `offload` calls wait at a time.

use iolab_model::ModelParams;

use crate::event_loop::{self, IoStyle};
use crate::{Ctx, Outcome};

pub(crate) fn run(ctx: &Ctx, params: &ModelParams) -> Outcome {
    let offload = params.offload().max(1);
    event_loop::run(ctx, params.workers(ctx.cores), offload, IoStyle::Offload)
        .param("offload", offload)
}
