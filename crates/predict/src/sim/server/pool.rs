//! `pool`: Tomcat's way. `threads` workers each hold a request for all of its
//! work (IO included); up to `max_connections` accepted connections whose
//! requests wait FIFO for a worker; then the listen `backlog`; then resets.

use iolab_model::ModelParams;

use super::{Admission, RequestThreads, Shape};

pub fn shape(p: &ModelParams, cores: u32) -> Shape {
    Shape {
        model: iolab_model::ModelKind::Pool,
        admission: Admission::Limited {
            max_connections: p.max_connections(),
            backlog: p.backlog(),
        },
        request_threads: Some(RequestThreads {
            cap: p.threads(),
            reject_when_full: false,
        }),
        offload: None,
        cpu_servers: cores,
        par_concurrent: false,
        fixed_threads: 0,
        holder: "pool threads",
    }
}
