//! In-process batch experiments: a fixed set of tasks run inside this process
//! under one executor per concurrency model (E3, futures over a blocking
//! service), or handed by a master to W workers (E1, actors).
//!
//! [`run`] draws the tasks ([`tasks`]), starts the [`measure`] meter, hands the
//! tasks to one executor module (one file per model, plus [`master`] and
//! [`master_timer`]) and folds what was measured into a [`BatchResult`].

pub mod io;
pub mod master;
pub mod master_timer;
pub mod measure;
pub mod tasks;

mod event_loop;
mod loop_async;
mod loop_blocking;
mod loop_offload;
mod pool;
mod sequential;
mod spans;
mod thread_per_request;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use iolab_model::batch::{BatchResult, BatchSpec, TaskMix};
use iolab_model::{ModelKind, ModelParams};
use serde_json::Value;

use crate::io::Io;
use crate::measure::{Meter, Timings};
use crate::tasks::TaskList;

/// Run one batch to completion (or until `cancel` is set: tasks not yet
/// started are then skipped and counted in `counters.skipped`).
///
/// With `spec.master` set, the E1 master/worker runs and `model` is only
/// recorded; otherwise `model` picks the executor and `params` its knobs.
pub fn run(
    spec: &BatchSpec,
    model: ModelKind,
    params: &ModelParams,
    cancel: &AtomicBool,
) -> BatchResult {
    run_with_io(spec, model, params, &Io::sleep(), cancel)
}

/// [`run`] with IO tasks going to `io` (a real backend) instead of the
/// embedded timer. A failed call fails its task (counted in `failed`).
pub fn run_with_io(
    spec: &BatchSpec,
    model: ModelKind,
    params: &ModelParams,
    io: &Io,
    cancel: &AtomicBool,
) -> BatchResult {
    run_traced(spec, model, params, io, None, cancel)
}

/// How a built-in model runs a batch.
type Executor = fn(&Ctx, &ModelParams) -> Outcome;

/// The batch executor of `model`: each model's file, registered here once
/// (`None`: a model only runtimes serve; its definition says it is not
/// built in, and a test holds the two together).
fn executor(model: ModelKind) -> Option<Executor> {
    Some(match model {
        ModelKind::Sequential => |ctx, _| sequential::run(ctx),
        ModelKind::Pool => pool::run,
        ModelKind::ThreadPerRequest => thread_per_request::run,
        ModelKind::LoopAsync => loop_async::run,
        ModelKind::LoopBlocking => loop_blocking::run,
        ModelKind::LoopOffload => loop_offload::run,
        ModelKind::Virtual | ModelKind::Prefork => return None,
    })
}

/// [`run_with_io`], recording who held what for tasks `0..N` when `spans`
/// is `Some(N)` (the result's `spans`; see [`spans`](crate::spans)).
pub fn run_traced(
    spec: &BatchSpec,
    model: ModelKind,
    params: &ModelParams,
    io: &Io,
    spans: Option<u32>,
    cancel: &AtomicBool,
) -> BatchResult {
    let io = io.fresh();
    let tasks = Arc::new(TaskList::draw(&spec.tasks, spec.seed));
    let n = tasks.len();
    let meter = Meter::start();
    let recorder = spans.map(iolab_spans::Recorder::new);
    let timings = Timings::new(n);
    let ctx = Ctx {
        tasks: tasks.clone(),
        timings: timings.clone(),
        cancel,
        cores: cores(),
        io: io.clone(),
        spans: recorder.clone(),
    };
    let outcome = match &spec.master {
        Some(m) if m.worker == iolab_model::batch::WorkerKind::Timer => master_timer::run(&ctx, m),
        Some(m) => master::run(&ctx, m),
        None => match executor(model) {
            Some(run) => run(&ctx, params),
            None => Outcome::failed(format!(
                "model '{model}' is not built in; batches run the built-in models only"
            )),
        },
    };
    let total_s = timings.start().elapsed().as_secs_f64();
    let peaks = meter.finish(outcome.peak_threads);

    let (by_type, mut counters) = measure::task_stats(&tasks, &timings);
    let failed = timings.failed();
    let completed: u64 = by_type.values().map(|s| s.count).sum();
    let skipped = n as u64 - completed - failed;
    counters.extend(outcome.counters);
    counters.insert("threads_before".into(), peaks.threads_before as f64);
    counters.insert("rss_before_mb".into(), round3(peaks.rss_before_mb));
    if skipped > 0 {
        counters.insert("skipped".into(), skipped as f64);
    }
    let mut failure = outcome.failure.or_else(|| {
        io.first_error()
            .map(|e| format!("{failed} of {n} tasks failed; first: {e}"))
    });
    if skipped > 0 && failure.is_none() {
        failure = Some(format!("cancelled: {skipped} of {n} tasks not run"));
    }

    let mut all_params = spec_params(spec);
    if !io.is_sleep() {
        all_params.insert("io".into(), Value::from(io.kind().as_str()));
    }
    all_params.extend(outcome.params);
    BatchResult {
        model: Some(model),
        params: all_params,
        tasks: n as u64,
        failed: if outcome.all_failed { n as u64 } else { failed },
        total_s,
        by_type,
        peak_threads: peaks.threads,
        peak_rss_mb: round3(peaks.rss_mb),
        cpu_utilisation: round3(peaks.cpu_utilisation),
        failure,
        counters,
        spans: recorder.map(|r| r.timeline(iolab_model::spans::SpanSource::Batch)),
    }
}

/// What every executor shares: the tasks, where to record their times, and
/// the cancel flag (checked before each task is handed out).
pub(crate) struct Ctx<'a> {
    pub tasks: Arc<TaskList>,
    pub timings: Arc<Timings>,
    pub cancel: &'a AtomicBool,
    pub cores: u32,
    pub io: Io,
    /// The span sample, when one was asked for.
    pub spans: Option<Arc<iolab_spans::Recorder>>,
}

impl Ctx<'_> {
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Run task `i` on this thread, blocking it, and time it.
    pub fn run_blocking(&self, i: usize) {
        let trace = spans::TaskTrace::of(self.spans.as_ref(), i, self.timings.start());
        let task = self.tasks.get(i);
        self.timings.begin(i);
        match trace.on_thread(task, None, || task.run_blocking(&self.io)) {
            Ok(()) => self.timings.end(i),
            Err(_) => self.timings.fail(i),
        }
        trace.done();
    }
}

/// What an executor reports beside the per-task times.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// The first thing that went wrong, if anything.
    pub failure: Option<String>,
    /// No task could run at all (e.g. an unsupported model).
    pub all_failed: bool,
    /// Executor-specific counters.
    pub counters: BTreeMap<String, f64>,
    /// Effective knobs (defaults resolved).
    pub params: BTreeMap<String, Value>,
    /// Most threads the executor itself had alive at once.
    pub peak_threads: Option<u64>,
}

impl Outcome {
    pub fn failed(msg: impl Into<String>) -> Self {
        Outcome {
            failure: Some(msg.into()),
            all_failed: true,
            ..Default::default()
        }
    }

    pub fn param(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.params.insert(key.into(), value.into());
        self
    }
}

/// A multi-threaded tokio runtime with `workers` loop threads and at most
/// `max_blocking` blocking-pool threads.
pub(crate) fn runtime(workers: u32, max_blocking: u32) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers.max(1) as usize)
        .max_blocking_threads(max_blocking.max(1) as usize)
        .thread_name("iolab-batch-loop")
        // IO (not only timers): async backend clients need the reactor.
        .enable_all()
        .build()
}

/// Logical cores of this machine.
pub fn cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

fn spec_params(spec: &BatchSpec) -> BTreeMap<String, Value> {
    let mut p = BTreeMap::new();
    p.insert("seed".into(), Value::from(spec.seed));
    match &spec.tasks {
        TaskMix::Calls { n, ms } => {
            p.insert("calls".into(), Value::from(*n));
            p.insert("ms".into(), Value::from(*ms));
        }
        TaskMix::Mixed { cpu, io, .. } => {
            p.insert("cpu_tasks".into(), Value::from(*cpu));
            p.insert("io_tasks".into(), Value::from(*io));
        }
    }
    if let Some(m) = &spec.master {
        p.insert("workers".into(), Value::from(m.workers));
        p.insert("worker".into(), Value::from(m.worker.as_str()));
    }
    // The executor adds the knobs it used, defaults resolved.
    p
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod registry_tests {
    use super::*;

    #[test]
    fn a_model_has_an_executor_exactly_when_its_definition_says_built_in() {
        for &m in ModelKind::ALL {
            assert_eq!(executor(m).is_some(), m.def().built_in, "{m}");
        }
    }
}
