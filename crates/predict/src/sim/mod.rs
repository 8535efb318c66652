//! The discrete-event simulation: one run of one model under one load.
//!
//! Time is in integer nanoseconds; events sit in a binary heap
//! ([`queue`]); client timeouts, whose deadlines come in send order, sit in a
//! plain FIFO beside it. The server side is the model's [`Shape`] (crates/model), the
//! work a compiled [`program`], the load an open loop ([`arrivals`]: the
//! load generator's own schedule) or a closed loop. CPU steps queue FIFO for `cpu_servers` cores (one step per
//! core at a time, not processor sharing: the same throughput, a slightly
//! different latency spread). Requests waiting for a request thread take
//! one first come, first served, except where the runtime's scheduler decides
//! otherwise ([`Scheduler`]; tokio's order in `sim/tokio`).

mod engine;
pub mod histogram;
pub mod noise;
pub mod program;
mod queue;
mod resource;
mod tokio;
mod trace;

use std::collections::BTreeMap;
use std::time::Duration;

use iolab_model::driver::{Arrival, ConnectionMode, Driver, Phase};
use iolab_model::schedule::Schedule;
use iolab_model::steps::Step;

use histogram::Histogram;
pub use iolab_model::concurrency::Shape;
use iolab_model::runtime::Runtime;
use iolab_model::{ModelKind, ModelParams};

/// When the simulated clients of an open loop send: the plan's one
/// [`Schedule`], the same send times the load generator's threads share out
/// (a test in `lab` holds the two together).
pub fn arrivals(phases: &[Phase], arrival: Arrival) -> Schedule {
    Schedule::new(phases, arrival)
}

/// What to simulate.
#[derive(Debug, Clone)]
pub struct SimInput<'a> {
    /// The model's shape (see [`Shape::of`]).
    pub shape: &'a Shape,
    /// What each request does.
    pub steps: &'a Step,
    /// How load arrives.
    pub driver: &'a Driver,
    /// Kept-alive or new connections, and the client's cap.
    pub connections: ConnectionMode,
    /// Client timeout.
    pub timeout: Duration,
    /// PostgreSQL connections `pg` steps wait for (the run's `pg_pool`).
    pub pg_pool: u32,
    /// Which waiting request a free request thread takes next.
    pub scheduler: Scheduler,
    /// Spread, stalls and slow windows ([`noise`]); `None`: every leaf
    /// takes its steps' time exactly.
    pub noise: Option<&'a noise::Noise>,
}

/// The order in which waiting requests get a free request thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scheduler {
    /// First come, first served (a pool's queue, the listen backlog).
    #[default]
    Fifo,
    /// Tokio's multi-thread runtime with handlers that block its workers
    /// (`sim/tokio`): the order of its queues and of its I/O driver's turns.
    Tokio,
}

impl Scheduler {
    /// The order of `model` as `runtime` serves it: tokio's for
    /// `loop-blocking` on the built-in runtime in one process (one runtime);
    /// first come, first served otherwise (other runtimes' loops, and the
    /// models whose workers never block, where no request waits for one).
    pub fn of(model: ModelKind, params: &ModelParams, runtime: &Runtime) -> Scheduler {
        let one_runtime = params.processes.unwrap_or(1) == 1;
        if model == ModelKind::LoopBlocking && runtime.is_rust() && one_runtime {
            Scheduler::Tokio
        } else {
            Scheduler::Fifo
        }
    }
}

/// What happened, counted exactly as the load generator counts.
#[derive(Debug, Clone)]
pub struct SimOutcome {
    /// Requests sent.
    pub offered: u64,
    /// Answered 2xx within the timeout.
    pub ok: u64,
    /// Failures by cause; `ok + sum(errors) == offered`.
    pub errors: BTreeMap<&'static str, u64>,
    /// Requests the server finished (abandoned ones included), ever.
    pub completed: u64,
    /// ... of which within the run's window.
    pub completed_in_window: u64,
    /// The run's length: the open loop's schedule, the closed loop's
    /// duration, or the time of the last answer; the window a measured
    /// run's rates are over too (`iolab_model::attack::window_s`).
    pub window_s: f64,
    /// Latencies of the ok requests, µs.
    pub latency: Histogram,
    /// Most requests in the server at once (queued, backlogged or running).
    pub peak_in_flight: u64,
    /// Most threads busy at once (request threads, or loop + offload threads).
    pub peak_threads: u64,
    /// Send time of the first request that timed out, seconds.
    pub first_timeout_sent_s: Option<f64>,
    /// Events scheduled (the simulation's own work).
    pub events: u64,
    /// One request's time with no waiting, ns.
    pub unloaded_ns: u64,
    /// One request's (CPU, IO, pg) work, ns.
    pub work_ns: (u64, u64, u64),
    /// What the server's resources held on average over the window: what
    /// a step's `/proc` readings see.
    pub held: Held,
    /// Most pooled connections in use at once.
    pub pg_peak: u32,
    /// Requests still in the server when the run ended (their clients may
    /// have given up; the server works on): the backlog a step leaves.
    pub left_in_server: u64,
}

/// Means over a run's window of what its resources held.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Held {
    /// Cores busy computing.
    pub cpu: f64,
    /// CPU steps waiting for a core.
    pub cpu_waiting: f64,
    /// Request threads (or offload threads) holding a request.
    pub threads: f64,
    /// Pooled connections in use.
    pub pg: f64,
    /// Requests waiting for a pooled connection.
    pub pg_waiting: f64,
}

impl SimOutcome {
    /// Goodput: ok per second of the run.
    pub fn goodput_rps(&self) -> f64 {
        iolab_model::attack::per_second(self.ok, self.window_s)
    }

    /// Throughput: requests the server finished per second of the run.
    pub fn throughput_rps(&self) -> f64 {
        iolab_model::attack::per_second(self.completed_in_window, self.window_s)
    }
}

/// Run the simulation to its end: the open loop's schedule plus one timeout
/// (nothing after that can change a client's result), or a closed loop's bound.
pub fn simulate(input: &SimInput<'_>) -> SimOutcome {
    engine::Engine::new(input).run(concurrency(input))
}

fn concurrency(input: &SimInput<'_>) -> u32 {
    match input.driver {
        Driver::Closed { concurrency, .. } => *concurrency,
        Driver::Open { .. } => 0,
    }
}

/// The spans of the first `size` requests of the same run ([`trace`]): it
/// runs only until every one of them has its answer and its client's result.
pub fn simulate_spans(input: &SimInput<'_>, size: u32) -> iolab_model::spans::Timeline {
    let mut engine = engine::Engine::new(input);
    let timeout_ms = input.timeout.as_secs_f64() * 1e3;
    engine.trace = Some(Box::new(trace::Trace::new(size, input.shape, timeout_ms)));
    engine.drive(concurrency(input));
    engine.trace.take().expect("set above").finish()
}
