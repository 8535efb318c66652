//! `loop-offload`: the loop stays free; every IO leaf is a blocking call on a
//! pool of `offload` threads (Kotlin `Dispatchers.IO`), so IO concurrency is
//! capped by that pool. `par` children are offloaded together.

use iolab_model::ModelParams;

use super::{Admission, Shape};

pub fn shape(p: &ModelParams, cores: u32) -> Shape {
    let workers = p.workers(cores);
    Shape {
        model: iolab_model::ModelKind::LoopOffload,
        admission: Admission::Open,
        request_threads: None,
        offload: Some(p.offload()),
        cpu_servers: workers.min(cores),
        par_concurrent: true,
        fixed_threads: workers,
        holder: "offload threads",
    }
}
