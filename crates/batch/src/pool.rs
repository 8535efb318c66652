//! `pool`: P OS threads take tasks from one shared FIFO queue and block on
//! each (E3's fixed pool of 8 and global pool of 2 x cores).

use std::sync::atomic::{AtomicUsize, Ordering};

use iolab_model::ModelParams;

use crate::{Ctx, Outcome};

pub(crate) fn run(ctx: &Ctx, params: &ModelParams) -> Outcome {
    let threads = params.threads().max(1);
    // The queue is the task list itself: taking a task is one fetch_add.
    let next = AtomicUsize::new(0);
    let mut failure = None;
    let mut started = 0u32;
    std::thread::scope(|s| {
        for t in 0..threads {
            let worker = || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= ctx.len() || ctx.cancelled() {
                    return;
                }
                ctx.run_blocking(i);
            };
            match std::thread::Builder::new()
                .name(format!("iolab-pool-{t}"))
                .spawn_scoped(s, worker)
            {
                Ok(_) => started += 1,
                Err(e) => {
                    failure = Some(format!("pool thread {t} of {threads} could not start: {e}"));
                    break;
                }
            }
        }
    });
    if started == 0 {
        // Nobody could take a task: every task failed.
        for i in 0..ctx.len() {
            ctx.timings.fail(i);
        }
    }
    let mut out = Outcome {
        failure,
        peak_threads: Some(u64::from(started)),
        ..Default::default()
    }
    .param("threads", threads);
    out.counters
        .insert("threads_started".into(), f64::from(started));
    out
}
