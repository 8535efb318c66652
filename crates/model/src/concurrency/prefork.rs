//! `prefork`: N single-threaded processes share one listen socket; each
//! serves one request at a time (gunicorn sync workers, unicorn, PHP-FPM).
//! A request holds a whole process, and every process costs its own memory.

use super::{Admission, Host, ModelDef, RequestThreads, Shape, Words};
use crate::knob::ModelParams;

pub(super) const DEF: ModelDef = ModelDef {
    name: "prefork",
    about: "N single-threaded processes sharing one listen socket",
    analogue: "gunicorn sync workers; unicorn; PHP-FPM",
    knobs: &["processes", "backlog"],
    built_in: false,
    blocks_threads: true,
    shape,
    words: Words::bounded(
        "worker processes",
        "worker processes",
        "one per worker process",
    ),
};

fn shape(p: &ModelParams, host: &Host) -> Shape {
    let processes = p.processes(host.cores);
    Shape {
        model: super::ModelKind::Prefork,
        admission: Admission::Limited {
            max_connections: processes,
            backlog: p.backlog(),
        },
        request_threads: Some(RequestThreads {
            cap: processes,
            reject_when_full: false,
        }),
        offload: None,
        // Processes compute in parallel, GIL or not.
        cpu_servers: processes.clamp(1, host.cores),
        par_concurrent: false,
        fixed_threads: 0,
        closes_connections: true,
        holder: DEF.words.holder,
    }
}
