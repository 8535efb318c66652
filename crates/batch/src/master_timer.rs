//! E1's master/worker with `timer` workers: the master and W workers are tokio
//! tasks talking over tokio mpsc channels, on a loop of D threads (D as for
//! `shared-pool`: Akka's default dispatcher, where E1's actors ran). A CPU
//! task is computed in place by the worker (holding a loop thread, as an actor
//! does); an IO task becomes a timer task and the worker sends `Ready` at once,
//! so no thread is held while it waits. The corrected variant of E1.

use iolab_model::batch::MasterSpec;
use iolab_model::cpu::leibniz;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::master::{Handout, ToMaster, ToWorker};
use crate::tasks::Task;
use crate::{runtime, Ctx, Outcome};

pub(crate) fn run(ctx: &Ctx, m: &MasterSpec) -> Outcome {
    let loop_threads = m.shared_pool(ctx.cores).max(1);
    let rt = match runtime(loop_threads, 1) {
        Ok(rt) => rt,
        Err(e) => return Outcome::failed(format!("the event loop could not start: {e}")),
    };
    rt.block_on(async {
        let (to_master, mut inbox) = unbounded_channel::<ToMaster>();
        let outs: Vec<UnboundedSender<ToWorker>> = (0..m.workers.max(1) as usize)
            .map(|id| {
                let (tx, rx) = unbounded_channel();
                tokio::spawn(worker(
                    ctx.tasks.clone(),
                    ctx.timings.clone(),
                    ctx.io.clone(),
                    id,
                    rx,
                    to_master.clone(),
                ));
                tx
            })
            .collect();
        drop(to_master);
        let mut handout = Handout::new(ctx.len());
        for out in &outs {
            if let Some(i) = handout.take(ctx) {
                let _ = out.send(ToWorker::Task(i));
            }
        }
        while !handout.finished(ctx) {
            match inbox.recv().await {
                Some(ToMaster::Ready(w)) => {
                    if let Some(i) = handout.take(ctx) {
                        let _ = outs[w].send(ToWorker::Task(i));
                    }
                }
                Some(ToMaster::Done) => handout.done(),
                None => break,
            }
        }
        for out in &outs {
            let _ = out.send(ToWorker::Stop);
        }
    });
    drop(rt);
    Outcome {
        peak_threads: Some(u64::from(loop_threads)),
        ..Default::default()
    }
    .param("loop_threads", loop_threads)
}

async fn worker(
    tasks: std::sync::Arc<crate::tasks::TaskList>,
    timings: std::sync::Arc<crate::measure::Timings>,
    io: crate::io::Io,
    id: usize,
    mut inbox: UnboundedReceiver<ToWorker>,
    to_master: UnboundedSender<ToMaster>,
) {
    while let Some(ToWorker::Task(i)) = inbox.recv().await {
        match tasks.get(i) {
            Task::Io { dur } => {
                let (timings, to_master, io) = (timings.clone(), to_master.clone(), io.clone());
                tokio::spawn(async move {
                    timings.begin(i);
                    // Boxed only for real backends (see event_loop::one).
                    let waited = if io.is_sleep() {
                        tokio::time::sleep(dur).await;
                        Ok(())
                    } else {
                        Box::pin(io.wait(dur)).await
                    };
                    match waited {
                        Ok(()) => timings.end(i),
                        Err(_) => timings.fail(i),
                    }
                    let _ = to_master.send(ToMaster::Done);
                });
            }
            Task::Cpu { terms } => {
                timings.begin(i);
                leibniz(terms);
                timings.end(i);
                let _ = to_master.send(ToMaster::Done);
            }
        }
        let _ = to_master.send(ToMaster::Ready(id));
    }
}
