//! `sequential`: one thread runs every task, one after another (E3's 100 s loop).

use crate::{Ctx, Outcome};

pub(crate) fn run(ctx: &Ctx) -> Outcome {
    for i in 0..ctx.len() {
        if ctx.cancelled() {
            break;
        }
        ctx.run_blocking(i);
    }
    Outcome {
        peak_threads: Some(0),
        ..Default::default()
    }
}
