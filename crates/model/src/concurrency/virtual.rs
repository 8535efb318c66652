//! `virtual`: a virtual (or green) thread per request that unmounts from its
//! carrier on IO (JVM Loom; gevent's monkey-patched blocking calls).

use super::{Host, ModelDef, ModelKind, Shape, Words};
use crate::knob::{Knob, ModelParams};

pub(super) const DEF: ModelDef = ModelDef {
    name: "virtual",
    about: "virtual or green threads: blocking code that holds no OS thread while waiting",
    analogue: "Spring MVC with spring.threads.virtual.enabled; gunicorn gevent workers",
    knobs: &[
        Knob::Threads,
        Knob::MaxConnections,
        Knob::Backlog,
        Knob::Processes,
    ],
    sized_by: &[],
    built_in: false,
    blocks_threads: false,
    held_on_thread: false,
    lane: "thread",
    shape,
    words: Words::non_blocking(
        "virtual threads unmount on IO",
        "a virtual thread per request",
    ),
};

fn shape(p: &ModelParams, host: &Host) -> Shape {
    let processes = p.processes.unwrap_or(1);
    let cpu = host.cpu_servers(processes, host.cores);
    Shape::non_blocking(ModelKind::Virtual, host.cores, cpu)
}
