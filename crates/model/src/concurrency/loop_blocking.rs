//! `loop-blocking`: an event loop whose handler blocks its loop thread, so
//! each worker holds one request through its waits (`suspend fun` +
//! `Thread.sleep`; a blocking call inside `async def`).

use super::{Admission, Host, ModelDef, RequestThreads, Shape, Words};
use crate::knob::ModelParams;

pub(super) const DEF: ModelDef = ModelDef {
    name: "loop-blocking",
    about: "event loop, blocking call on the loop thread",
    analogue: "suspend fun + Thread.sleep; time.sleep inside async def",
    knobs: &["workers", "processes", "backlog"],
    built_in: true,
    blocks_threads: true,
    shape,
    words: Words::bounded(
        "event-loop threads",
        "event-loop workers",
        "one per blocked loop worker",
    ),
};

fn shape(p: &ModelParams, host: &Host) -> Shape {
    let processes = p.processes.unwrap_or(1);
    let workers = p.workers(host.cores).saturating_mul(processes);
    Shape {
        model: super::ModelKind::LoopBlocking,
        admission: Admission::Open,
        request_threads: Some(RequestThreads {
            cap: workers,
            reject_when_full: false,
        }),
        offload: None,
        cpu_servers: host.cpu_servers(processes, host.cores),
        par_concurrent: false,
        fixed_threads: 0,
        closes_connections: false,
        holder: DEF.words.holder,
    }
}
