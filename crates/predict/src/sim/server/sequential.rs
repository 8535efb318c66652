//! `sequential`: one thread accepts a connection, serves it, then accepts the
//! next; everyone else waits in the listen backlog or is reset.

use iolab_model::ModelParams;

use super::{Admission, RequestThreads, Shape};

pub fn shape(p: &ModelParams, _cores: u32) -> Shape {
    Shape {
        model: iolab_model::ModelKind::Sequential,
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
        holder: "the one thread",
    }
}
