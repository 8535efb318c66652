//! `prefork`: N single-threaded processes share one listen socket; each
//! serves one request at a time (gunicorn sync workers, unicorn, PHP-FPM).
//! A request holds a whole process, and every process costs its own memory.

use super::{Admission, Host, ModelDef, ModelKind, RequestThreads, Shape, Words};
use crate::knob::{Knob, ModelParams};

pub(super) const DEF: ModelDef = ModelDef {
    name: "prefork",
    about: "N single-threaded processes sharing one listen socket",
    analogue: "gunicorn sync workers; unicorn; PHP-FPM",
    knobs: &[Knob::Processes, Knob::Backlog],
    sized_by: &[Knob::Processes],
    built_in: false,
    blocks_threads: true,
    held_on_thread: true,
    lane: "thread",
    shape,
    words: Words::bounded(
        "worker processes",
        "worker processes",
        "one per worker process",
    ),
};

fn shape(p: &ModelParams, host: &Host) -> Shape {
    let processes = p.processes(host.cores);
    // Processes compute in parallel, GIL or not.
    let cpu = processes.clamp(1, host.cores);
    Shape {
        admission: Admission::Limited {
            max_connections: processes,
            backlog: p.backlog(),
        },
        closes_connections: true,
        ..Shape::holding(ModelKind::Prefork, RequestThreads::queued(processes), cpu)
    }
}
