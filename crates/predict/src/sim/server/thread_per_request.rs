//! `thread-per-request`: the accept loop starts a thread per request at once;
//! with `max_threads` set, a request that would exceed it gets a 503.

use iolab_model::ModelParams;

use super::{Admission, RequestThreads, Shape};

pub fn shape(p: &ModelParams, cores: u32) -> Shape {
    Shape {
        model: iolab_model::ModelKind::ThreadPerRequest,
        admission: Admission::Open,
        request_threads: Some(RequestThreads {
            cap: p.max_threads.unwrap_or(u32::MAX),
            reject_when_full: true,
        }),
        offload: None,
        cpu_servers: cores,
        par_concurrent: false,
        fixed_threads: 0,
        holder: "request threads",
    }
}
