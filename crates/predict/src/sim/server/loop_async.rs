//! `loop-async`: IO holds no thread (timers, async clients); only CPU steps
//! take a loop worker, and workers share the cores.

use iolab_model::ModelParams;

use super::{Admission, Shape};

pub fn shape(p: &ModelParams, cores: u32) -> Shape {
    let workers = p.workers(cores);
    Shape {
        model: iolab_model::ModelKind::LoopAsync,
        admission: Admission::Open,
        request_threads: None,
        offload: None,
        cpu_servers: workers.min(cores),
        par_concurrent: true,
        fixed_threads: workers,
        holder: "IO is non-blocking",
    }
}
