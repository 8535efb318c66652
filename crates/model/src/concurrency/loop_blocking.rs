//! `loop-blocking`: an event loop whose handler blocks its loop thread, so
//! each worker holds one request through its waits (`suspend fun` +
//! `Thread.sleep`; a blocking call inside `async def`).

use super::{Host, ModelDef, ModelKind, RequestThreads, Shape, Words};
use crate::knob::{Knob, ModelParams};

pub(super) const DEF: ModelDef = ModelDef {
    name: "loop-blocking",
    about: "event loop, blocking call on the loop thread",
    analogue: "suspend fun + Thread.sleep; time.sleep inside async def",
    knobs: &[Knob::Workers, Knob::Processes, Knob::Backlog],
    sized_by: &[Knob::Workers, Knob::Processes],
    built_in: true,
    blocks_threads: true,
    held_on_thread: false,
    lane: "loop",
    shape,
    words: Words::bounded(
        "event-loop threads",
        "event-loop workers",
        "one per blocked loop worker",
    ),
};

fn shape(p: &ModelParams, host: &Host) -> Shape {
    let processes = p.processes.unwrap_or(1);
    let workers = RequestThreads::queued(p.workers(host.cores).saturating_mul(processes));
    let cpu = host.cpu_servers(processes, host.cores);
    Shape::holding(ModelKind::LoopBlocking, workers, cpu)
}
