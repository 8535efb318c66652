//! `sequential`: one thread accepts a connection, serves it, then accepts the
//! next; everyone else waits in the listen backlog or is reset.

use super::{Admission, Host, ModelDef, ModelKind, RequestThreads, Shape, Words};
use crate::knob::{Knob, ModelParams};

pub(super) const DEF: ModelDef = ModelDef {
    name: "sequential",
    about: "one thread, one request at a time",
    analogue: "the 100 s loop; a single-reactor server (Thin)",
    knobs: &[Knob::Backlog],
    sized_by: &[],
    built_in: true,
    blocks_threads: true,
    held_on_thread: true,
    lane: "thread",
    shape,
    words: Words::bounded("thread", "the one thread", "one thread"),
};

fn shape(p: &ModelParams, _host: &Host) -> Shape {
    let one = RequestThreads::queued(1);
    Shape {
        admission: Admission::Limited {
            max_connections: 1,
            backlog: p.backlog(),
        },
        closes_connections: true,
        ..Shape::holding(ModelKind::Sequential, one, 1)
    }
}
