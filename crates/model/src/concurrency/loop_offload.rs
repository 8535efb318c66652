//! `loop-offload`: an event loop that moves each blocking call to a bounded
//! pool; the loop stays free, the pool's threads are held (`Dispatchers.IO`,
//! `supplyAsync`, `asyncio.to_thread`).

use super::{Host, ModelDef, ModelKind, Shape, Words};
use crate::knob::{Knob, ModelParams};

pub(super) const DEF: ModelDef = ModelDef {
    name: "loop-offload",
    about: "event loop, blocking call moved to a bounded pool of P",
    analogue: "withContext(Dispatchers.IO); supplyAsync on the common pool; asyncio.to_thread",
    knobs: &[Knob::Workers, Knob::Offload, Knob::Processes, Knob::Backlog],
    sized_by: &[Knob::Offload, Knob::Processes],
    built_in: true,
    blocks_threads: true,
    held_on_thread: false,
    lane: "loop",
    shape,
    words: Words::bounded(
        "offload threads",
        "offload threads",
        "one per offload thread",
    ),
};

fn shape(p: &ModelParams, host: &Host) -> Shape {
    let workers = p.workers(host.cores);
    let processes = p.processes.unwrap_or(1);
    let cpu = host.cpu_servers(processes, workers.saturating_mul(processes));
    Shape {
        offload: Some(p.offload().saturating_mul(processes)),
        ..Shape::non_blocking(ModelKind::LoopOffload, workers, cpu)
    }
}
