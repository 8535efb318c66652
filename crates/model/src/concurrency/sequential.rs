//! `sequential`: one thread accepts a connection, serves it, then accepts the
//! next; everyone else waits in the listen backlog or is reset.

use super::{Admission, Host, ModelDef, RequestThreads, Shape, Words};
use crate::knob::ModelParams;

pub(super) const DEF: ModelDef = ModelDef {
    name: "sequential",
    about: "one thread, one request at a time",
    analogue: "the 100 s loop; a single-reactor server (Thin)",
    knobs: &["backlog"],
    built_in: true,
    blocks_threads: true,
    shape,
    words: Words::bounded("thread", "the one thread", "one thread"),
};

fn shape(p: &ModelParams, _host: &Host) -> Shape {
    Shape {
        model: super::ModelKind::Sequential,
        admission: Admission::Limited {
            max_connections: 1,
            backlog: p.backlog(),
        },
        request_threads: Some(RequestThreads {
            cap: 1,
            reject_when_full: false,
        }),
        offload: None,
        cpu_servers: 1,
        par_concurrent: false,
        fixed_threads: 0,
        closes_connections: true,
        holder: DEF.words.holder,
    }
}
