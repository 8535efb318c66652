//! `pool`: N OS threads take requests from a FIFO queue; a request holds its
//! thread through every blocking call (Tomcat; gunicorn gthread with several
//! processes of `threads` each).

use super::{Admission, Host, ModelDef, ModelKind, RequestThreads, Shape, Words};
use crate::knob::{Knob, ModelParams};

pub(super) const DEF: ModelDef = ModelDef {
    name: "pool",
    about: "N OS threads, blocking IO, bounded connections and accept queue",
    analogue: "Tomcat 200; a fixed pool of 8; gunicorn gthread; an Akka blocking worker",
    knobs: &[
        Knob::Threads,
        Knob::MaxConnections,
        Knob::Backlog,
        Knob::Processes,
    ],
    sized_by: &[Knob::Threads, Knob::Processes],
    built_in: true,
    blocks_threads: true,
    held_on_thread: true,
    lane: "pool",
    shape,
    words: Words::bounded("threads", "pool threads", "one per pool thread"),
};

fn shape(p: &ModelParams, host: &Host) -> Shape {
    let processes = p.processes.unwrap_or(1);
    let threads = RequestThreads::queued(p.threads().saturating_mul(processes));
    let cpu = host.cpu_servers(processes, host.cores);
    Shape {
        admission: Admission::Limited {
            max_connections: p.max_connections(),
            backlog: p.backlog(),
        },
        ..Shape::holding(ModelKind::Pool, threads, cpu)
    }
}
