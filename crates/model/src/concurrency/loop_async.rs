//! `loop-async`: IO holds no thread (timers, async clients); only CPU steps
//! take a loop worker, and workers share the cores.

use super::{Host, ModelDef, ModelKind, Shape, Words};
use crate::knob::{Knob, ModelParams};

pub(super) const DEF: ModelDef = ModelDef {
    name: "loop-async",
    about: "event loop, truly non-blocking IO",
    analogue: "delay(); scheduler timers; async drivers (R2DBC, asyncio, EventMachine, Node)",
    knobs: &[Knob::Workers, Knob::Processes, Knob::Backlog],
    sized_by: &[],
    built_in: true,
    blocks_threads: false,
    held_on_thread: false,
    lane: "loop",
    shape,
    words: Words::non_blocking("IO is non-blocking", "no thread held while waiting"),
};

fn shape(p: &ModelParams, host: &Host) -> Shape {
    let processes = p.processes.unwrap_or(1);
    let workers = p.workers(host.cores);
    let cpu = host.cpu_servers(processes, workers.saturating_mul(processes));
    Shape::non_blocking(ModelKind::LoopAsync, workers, cpu)
}
