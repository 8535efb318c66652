//! How each model serves a request, as a [`Shape`]: the same few axes
//! (connection admission, a thread held per request, an offload pool, where
//! CPU runs, whether `par` overlaps) set per model, one file each.

mod loop_async;
mod loop_blocking;
mod loop_offload;
mod pool;
mod sequential;
mod thread_per_request;
mod virtual_threads;

use iolab_model::{ModelKind, ModelParams};

/// Which connections the server takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Accepts every connection at once (an async accept loop).
    Open,
    /// Holds at most `max_connections`; then a listen `backlog`; then resets.
    Limited {
        /// Connections held (accepted) at once.
        max_connections: u32,
        /// Connections the kernel queues beyond that.
        backlog: u32,
    },
}

/// A thread held by a request from start to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestThreads {
    /// Threads (u32::MAX = no limit).
    pub cap: u32,
    /// When all are busy: answer 503 at once (true) or queue FIFO (false).
    pub reject_when_full: bool,
}

/// The model as the simulation sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Model it stands for.
    pub model: ModelKind,
    /// Connection admission.
    pub admission: Admission,
    /// A thread per request, if the model holds one.
    pub request_threads: Option<RequestThreads>,
    /// Pool that runs each IO leaf (blocking calls moved off the loop).
    pub offload: Option<u32>,
    /// Servers CPU steps queue for (cores, or loop workers on cores).
    pub cpu_servers: u32,
    /// Do `par` children overlap?
    pub par_concurrent: bool,
    /// Threads that exist whatever the load (event-loop workers).
    pub fixed_threads: u32,
    /// One phrase naming what holds a request, for explanations.
    pub holder: &'static str,
}

impl Shape {
    /// The shape of `model` with its knobs on `cores` CPUs.
    pub fn of(model: ModelKind, params: &ModelParams, cores: u32) -> Shape {
        let cores = cores.max(1);
        match model {
            ModelKind::Sequential => sequential::shape(params, cores),
            ModelKind::Pool => pool::shape(params, cores),
            ModelKind::ThreadPerRequest => thread_per_request::shape(params, cores),
            ModelKind::LoopBlocking => loop_blocking::shape(params, cores),
            ModelKind::LoopOffload => loop_offload::shape(params, cores),
            ModelKind::LoopAsync => loop_async::shape(params, cores),
            ModelKind::Virtual => virtual_threads::shape(params, cores),
        }
    }
}
