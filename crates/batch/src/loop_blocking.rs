//! `loop-blocking`: an event loop whose tasks block the loop thread itself
//! (`suspend fun` + `Thread.sleep`): at most `workers` calls at a time.

use iolab_model::ModelParams;

use crate::event_loop::{self, IoStyle};
use crate::{Ctx, Outcome};

pub(crate) fn run(ctx: &Ctx, params: &ModelParams) -> Outcome {
    event_loop::run(ctx, params.workers(ctx.cores), 1, IoStyle::BlockLoop)
}
