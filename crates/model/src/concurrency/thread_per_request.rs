//! `thread-per-request`: the accept loop starts a thread per request at once;
//! with `max_threads` set, a request that would exceed it gets a 503.

use super::{Host, ModelDef, ModelKind, RequestThreads, Shape, Words};
use crate::knob::{Knob, ModelParams};

pub(super) const DEF: ModelDef = ModelDef {
    name: "thread-per-request",
    about: "a new OS thread each, up to a cap",
    analogue: "a servlet container with 1,000 threads; Scala's blocking{}",
    knobs: &[Knob::MaxThreads],
    sized_by: &[Knob::MaxThreads],
    built_in: true,
    blocks_threads: true,
    held_on_thread: true,
    lane: "request",
    shape,
    words: Words {
        unit: "threads",
        holder: "request threads",
        per_call: "one per thread",
        unbounded: "a new thread per request, no cap",
    },
};

fn shape(p: &ModelParams, host: &Host) -> Shape {
    let threads = RequestThreads {
        cap: p.max_threads.unwrap_or(u32::MAX),
        reject_when_full: true,
    };
    Shape::holding(
        ModelKind::ThreadPerRequest,
        threads,
        host.cpu_servers(1, host.cores),
    )
}
