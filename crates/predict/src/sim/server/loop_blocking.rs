//! `loop-blocking`: `workers` event-loop threads; a blocking call stalls its
//! worker for the whole request, so requests queue for a free worker.

use iolab_model::ModelParams;

use super::{Admission, RequestThreads, Shape};

pub fn shape(p: &ModelParams, cores: u32) -> Shape {
    Shape {
        model: iolab_model::ModelKind::LoopBlocking,
        admission: Admission::Open,
        request_threads: Some(RequestThreads {
            cap: p.workers(cores),
            reject_when_full: false,
        }),
        offload: None,
        cpu_servers: cores,
        par_concurrent: false,
        fixed_threads: 0,
        holder: "event-loop workers",
    }
}
