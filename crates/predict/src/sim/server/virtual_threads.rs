//! `virtual`: JVM virtual threads. A blocking call unmounts the virtual
//! thread, so IO holds no carrier; CPU runs on `cores` carriers. (Pinned
//! carriers, e.g. `synchronized` around IO, are not modelled yet.)

use iolab_model::ModelParams;

use super::{Admission, Shape};

pub fn shape(_p: &ModelParams, cores: u32) -> Shape {
    Shape {
        model: iolab_model::ModelKind::Virtual,
        admission: Admission::Open,
        request_threads: None,
        offload: None,
        cpu_servers: cores,
        par_concurrent: true,
        fixed_threads: cores,
        holder: "virtual threads unmount on IO",
    }
}
