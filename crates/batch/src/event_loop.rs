//! The one driver behind the three event-loop models: every task becomes a
//! tokio task on a runtime of `workers` loop threads; the models differ only
//! in what an IO task does ([`IoStyle`]). CPU tasks always run on the loop.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use iolab_model::cpu::leibniz;
use tokio::sync::Notify;

use crate::io::Io;
use crate::measure::Timings;
use crate::spans::TaskTrace;
use crate::tasks::{Task, TaskList};
use crate::{runtime, Ctx, Outcome};

/// What an IO task does on an event loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IoStyle {
    /// A timer: no thread is held while waiting (`loop-async`).
    Timer,
    /// A blocking sleep on the loop thread itself (`loop-blocking`).
    BlockLoop,
    /// A blocking sleep moved to the bounded blocking pool (`loop-offload`).
    Offload,
}

/// Shared by every task: one `Arc` clone per task.
struct Shared {
    tasks: Arc<TaskList>,
    io: Io,
    timings: Arc<Timings>,
    spans: Option<Arc<iolab_spans::Recorder>>,
    remaining: AtomicUsize,
    all_done: Notify,
}

impl Shared {
    fn finished(&self, n: usize) {
        if self.remaining.fetch_sub(n, Ordering::AcqRel) == n {
            self.all_done.notify_one();
        }
    }
}

/// Spawn every task on a fresh runtime and wait for all of them.
pub(crate) fn run(ctx: &Ctx, workers: u32, max_blocking: u32, style: IoStyle) -> Outcome {
    let rt = match runtime(workers, max_blocking) {
        Ok(rt) => rt,
        Err(e) => return Outcome::failed(format!("the event loop could not start: {e}")),
    };
    let n = ctx.len();
    let shared = Arc::new(Shared {
        tasks: ctx.tasks.clone(),
        io: ctx.io.clone(),
        timings: ctx.timings.clone(),
        spans: ctx.spans.clone(),
        remaining: AtomicUsize::new(n),
        all_done: Notify::new(),
    });
    rt.block_on(async {
        if n == 0 {
            return;
        }
        // Spawn from the loop threads, in chunks spawned all at once, so new
        // tasks land on local queues (cheap) and every loop thread spawns in
        // parallel; the cancel flag is looked at between chunks.
        const CHUNK: usize = 8_192;
        let mut spawned = 0;
        let mut spawners = Vec::new();
        let _ticker = (style == IoStyle::Timer).then(|| ctx.timings.ticker());
        while spawned < n && !ctx.cancelled() {
            let (from, to) = (spawned, (spawned + CHUNK).min(n));
            let sh = shared.clone();
            spawners.push(tokio::spawn(async move {
                let mut issued = 0;
                for i in from..to {
                    // One clock read per 64 calls issued (see `one`).
                    if (i - from) % 64 == 0 {
                        issued = sh.timings.now_ns();
                    }
                    tokio::spawn(one(sh.clone(), i, style, issued));
                }
            }));
            spawned = to;
        }
        for s in spawners {
            let _ = s.await;
        }
        if spawned < n {
            shared.finished(n - spawned);
        }
        while shared.remaining.load(Ordering::Acquire) > 0 {
            shared.all_done.notified().await;
        }
    });
    drop(rt);
    Outcome::default().param("workers", workers)
}

/// Run task `i`, issued (spawned) at `issued` ns since the batch start.
///
/// A timer call reads no clock: it starts when issued, as a call does, and
/// sleeps until `issued + dur`; it ends at that deadline or at the ticker's
/// later time (which lags by at most ~1 ms, tokio's own timer resolution).
async fn one(sh: Arc<Shared>, i: usize, style: IoStyle, issued: u64) {
    let issued_at = sh.timings.start() + Duration::from_nanos(issued);
    let trace = TaskTrace::of(sh.spans.as_ref(), i, issued_at);
    match (sh.tasks.get(i), style) {
        (Task::Io { dur }, IoStyle::Timer) if !sh.io.is_sleep() => {
            sh.timings.begin(i);
            // Boxed: a backend client's future is kilobytes, and inline it
            // would size every task's future, a million of them included.
            match Box::pin(sh.io.wait(dur)).await {
                Ok(()) => sh.timings.end(i),
                Err(_) => sh.timings.fail(i),
            }
            trace.waited_free(issued_at);
        }
        (Task::Io { dur }, IoStyle::Timer) => {
            let t = &sh.timings;
            let deadline = issued + dur.as_nanos() as u64;
            t.begin_at(i, issued);
            tokio::time::sleep_until(tokio::time::Instant::from_std(
                t.start() + Duration::from_nanos(deadline),
            ))
            .await;
            t.end_at(i, deadline.max(t.coarse_ns()));
            trace.waited_free(issued_at);
        }
        (task @ Task::Io { dur }, IoStyle::Offload) => {
            let (t, io) = (sh.timings.clone(), sh.io.clone());
            let res = tokio::task::spawn_blocking(move || {
                t.begin(i);
                let ok = trace.on_thread(task, Some("offload"), || io.block(dur));
                trace.done();
                match ok {
                    Ok(()) => t.end(i),
                    Err(_) => t.fail(i),
                }
            })
            .await;
            if res.is_err() {
                sh.timings.fail(i);
            }
            sh.finished(1);
            return;
        }
        (task @ Task::Io { dur }, IoStyle::BlockLoop) => {
            sh.timings.begin(i);
            match trace.on_thread(task, None, || sh.io.block(dur)) {
                Ok(()) => sh.timings.end(i),
                Err(_) => sh.timings.fail(i),
            }
        }
        (task @ Task::Cpu { terms }, _) => {
            sh.timings.begin(i);
            trace.on_thread(task, None, || leibniz(terms));
            sh.timings.end(i);
        }
    }
    trace.done();
    sh.finished(1);
}
