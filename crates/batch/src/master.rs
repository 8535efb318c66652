//! E1's master/worker on OS threads, with real message passing
//! (`std::sync::mpsc`): the master sends one task to each of W workers, then
//! one more to whichever worker says `Ready`, until none are left.
//!
//! - `blocking` worker: does the task in place (a CPU series or a blocking
//!   sleep), then sends `Done` and `Ready`.
//! - `shared-pool` worker: computes CPU tasks in place, but hands an IO sleep
//!   to a shared pool of D threads and sends `Ready` at once; the pool thread
//!   sends `Done` when the sleep ends. This is E1's "non-blocking" worker, and
//!   its flaw: IO concurrency is capped by D.
//!
//! The `timer` worker lives in [`crate::master_timer`].

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Mutex;

use iolab_model::batch::{MasterSpec, WorkerKind};

use crate::tasks::Task;
use crate::{Ctx, Outcome};

/// Worker to master.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ToMaster {
    /// Worker `id` can take another task.
    Ready(usize),
    /// A task finished.
    Done,
}

/// Master to worker.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ToWorker {
    /// Do task `i`.
    Task(usize),
    /// No more tasks: exit.
    Stop,
}

/// The master's bookkeeping, shared by the thread and the tokio versions.
pub(crate) struct Handout {
    n: usize,
    next: usize,
    done: usize,
}

impl Handout {
    pub fn new(n: usize) -> Self {
        Handout {
            n,
            next: 0,
            done: 0,
        }
    }

    /// The next untaken task, unless none are left or the batch is cancelled.
    pub fn take(&mut self, ctx: &Ctx) -> Option<usize> {
        (self.next < self.n && !ctx.cancelled()).then(|| {
            self.next += 1;
            self.next - 1
        })
    }

    pub fn done(&mut self) {
        self.done += 1;
    }

    /// Every task handed out is done and no more will be.
    pub fn finished(&self, ctx: &Ctx) -> bool {
        let target = if ctx.cancelled() { self.next } else { self.n };
        self.done >= target
    }
}

pub(crate) fn run(ctx: &Ctx, m: &MasterSpec) -> Outcome {
    let workers = m.workers.max(1);
    let pool_size = (m.worker == WorkerKind::SharedPool).then(|| m.shared_pool(ctx.cores).max(1));
    let (to_master, inbox) = mpsc::channel::<ToMaster>();
    let mut failure = None;
    let mut started_workers = 0u32;
    let mut started_pool = 0u32;

    let (pool_tx, pool_rx) = mpsc::channel::<usize>();
    let pool_rx = Mutex::new(pool_rx);
    std::thread::scope(|s| {
        let pool_tx = pool_tx;
        for t in 0..pool_size.unwrap_or(0) {
            let (pool_rx, to_master) = (&pool_rx, to_master.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("iolab-shared-{t}"))
                .spawn_scoped(s, move || pool_thread(ctx, pool_rx, to_master));
            match spawned {
                Ok(_) => started_pool += 1,
                Err(e) => {
                    failure.get_or_insert(format!("shared pool thread {t} could not start: {e}"));
                    break;
                }
            }
        }
        let mut outs = Vec::new();
        for id in 0..workers as usize {
            let (tx, rx) = mpsc::channel::<ToWorker>();
            let (to_master, pool_tx) = (to_master.clone(), pool_tx.clone());
            let kind = if started_pool == 0 {
                WorkerKind::Blocking
            } else {
                m.worker
            };
            let spawned = std::thread::Builder::new()
                .name(format!("iolab-worker-{id}"))
                .spawn_scoped(s, move || worker(ctx, id, kind, rx, to_master, pool_tx));
            match spawned {
                Ok(_) => outs.push(tx),
                Err(e) => {
                    failure.get_or_insert(format!("worker {id} could not start: {e}"));
                    break;
                }
            }
        }
        started_workers = outs.len() as u32;
        drop(pool_tx);
        drop(to_master);

        hand_out(ctx, &outs, &inbox);
        for out in &outs {
            let _ = out.send(ToWorker::Stop);
        }
        // Workers exit on Stop and drop their pool senders; pool threads then exit.
    });

    let mut out = Outcome {
        failure,
        peak_threads: Some(u64::from(started_workers + started_pool)),
        ..Default::default()
    };
    if let Some(d) = pool_size {
        out = out.param("shared_pool", d);
    }
    out
}

/// The master's loop: one task to each worker, then one more to whichever
/// reports ready, until every task handed out is done (or nobody started).
fn hand_out(ctx: &Ctx, outs: &[Sender<ToWorker>], inbox: &Receiver<ToMaster>) {
    let mut handout = Handout::new(ctx.len());
    if outs.is_empty() {
        for i in 0..ctx.len() {
            ctx.timings.fail(i);
        }
        return;
    }
    for out in outs {
        if let Some(i) = handout.take(ctx) {
            let _ = out.send(ToWorker::Task(i));
        }
    }
    while !handout.finished(ctx) {
        match inbox.recv() {
            Ok(ToMaster::Ready(w)) => {
                if let Some(i) = handout.take(ctx) {
                    let _ = outs[w].send(ToWorker::Task(i));
                }
            }
            Ok(ToMaster::Done) => handout.done(),
            Err(_) => break,
        }
    }
}

fn worker(
    ctx: &Ctx,
    id: usize,
    kind: WorkerKind,
    inbox: Receiver<ToWorker>,
    to_master: Sender<ToMaster>,
    pool: Sender<usize>,
) {
    while let Ok(ToWorker::Task(i)) = inbox.recv() {
        match (kind, ctx.tasks.get(i)) {
            (WorkerKind::SharedPool, Task::Io { .. }) => {
                // Ready at once; the pool thread reports Done.
                if pool.send(i).is_err() {
                    ctx.timings.fail(i);
                    let _ = to_master.send(ToMaster::Done);
                }
            }
            _ => {
                ctx.run_blocking(i);
                let _ = to_master.send(ToMaster::Done);
            }
        }
        let _ = to_master.send(ToMaster::Ready(id));
    }
}

fn pool_thread(ctx: &Ctx, jobs: &Mutex<Receiver<usize>>, to_master: Sender<ToMaster>) {
    loop {
        let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(i) = job else { return };
        ctx.run_blocking(i);
        let _ = to_master.send(ToMaster::Done);
    }
}
