//! [`Shape`]: a model as the simulation and the explanations see it, the same
//! few axes set per model; and [`Capacity`], how many requests it can hold
//! while they wait on IO, derived from the shape.

use super::ModelKind;

/// What a model runs on: the machine's cores and what its runtime adds.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Host {
    /// Cores the target may use.
    pub cores: u32,
    /// One interpreter lock per process (CPython): threads of one process
    /// overlap their IO but compute one at a time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gil: bool,
}

impl From<u32> for Host {
    fn from(cores: u32) -> Host {
        Host::cores(cores)
    }
}

impl Host {
    /// A host of `cores` cores and no interpreter lock.
    pub fn cores(cores: u32) -> Host {
        Host { cores, gil: false }
    }

    pub(crate) fn at_least_one_core(self) -> Host {
        Host {
            cores: self.cores.max(1),
            ..self
        }
    }

    /// Servers CPU steps queue for when `threads` threads in `processes`
    /// processes compute: the cores, or one per process under a GIL.
    pub fn cpu_servers(&self, processes: u32, threads: u32) -> u32 {
        let runnable = if self.gil { processes } else { threads };
        runnable.clamp(1, self.cores.max(1))
    }
}

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

impl RequestThreads {
    /// `cap` threads, requests queueing first come, first served for one.
    pub const fn queued(cap: u32) -> RequestThreads {
        RequestThreads {
            cap,
            reject_when_full: false,
        }
    }
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
    /// Answers with `Connection: close`: every request needs a new
    /// connection, and a connection is held from accept to answer, so the
    /// listen backlog is the queue (a single-threaded server, prefork).
    pub closes_connections: bool,
    /// One phrase naming what holds a request, for explanations.
    pub holder: &'static str,
}

/// How many requests a model can hold while they wait on IO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capacity {
    /// At most `n` at once, one per `what`.
    Bounded {
        /// How many.
        n: u32,
        /// Of what, in the plural (`threads`, `offload threads`).
        what: &'static str,
    },
    /// No thread is held while waiting (or one is made per request, no cap).
    Unbounded {
        /// Why, in a phrase.
        why: &'static str,
    },
}

impl Shape {
    /// A model whose request holds a thread from start to answer (`threads`),
    /// accepting every connection and keeping it alive; CPU steps queue for
    /// `cpu_servers`.
    pub fn holding(model: ModelKind, threads: RequestThreads, cpu_servers: u32) -> Shape {
        Shape {
            model,
            admission: Admission::Open,
            request_threads: Some(threads),
            offload: None,
            cpu_servers,
            par_concurrent: false,
            fixed_threads: 0,
            closes_connections: false,
            holder: model.def().words.holder,
        }
    }

    /// A model whose request holds no thread while it waits: `fixed_threads`
    /// loop threads run every request's CPU steps (on `cpu_servers`), and
    /// `par` children overlap.
    pub fn non_blocking(model: ModelKind, fixed_threads: u32, cpu_servers: u32) -> Shape {
        Shape {
            model,
            admission: Admission::Open,
            request_threads: None,
            offload: None,
            cpu_servers,
            par_concurrent: true,
            fixed_threads,
            closes_connections: false,
            holder: model.def().words.holder,
        }
    }

    /// How many blocking IO waits it holds at once.
    pub fn capacity(&self) -> Capacity {
        let words = self.model.def().words;
        let bound = match (self.request_threads, self.offload) {
            (Some(rt), _) if rt.cap != u32::MAX => Some(rt.cap),
            (None, Some(p)) => Some(p),
            _ => None,
        };
        match bound {
            Some(n) => Capacity::Bounded {
                n,
                what: words.unit,
            },
            None => Capacity::Unbounded {
                why: words.unbounded,
            },
        }
    }

    /// Blocking calls it runs at once (u64::MAX: as many as there are).
    pub fn parallelism(&self) -> u64 {
        match self.capacity() {
            Capacity::Bounded { n, .. } => u64::from(n),
            Capacity::Unbounded { .. } => u64::MAX,
        }
    }
}
