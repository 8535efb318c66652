//! `iolab batch`: batches (E1 master/worker, E3 futures), in process or on a
//! batch runtime (a preset's `runtime = "scala"`). Flags or a preset become a
//! list of runs ([`plan`]), each run by `iolab_batch` or the runtime's batch
//! runner, then printed as a table or as `iolab.batch/1` JSON.

mod plan;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use iolab_backends::Backends;
use iolab_batch::io::Io;
use iolab_lab::targets::Launch;
use iolab_model::batch::{BatchFile, BatchResult, TaskMix};
use iolab_model::experiment::{RunSpec, Work};
use iolab_model::parse_duration;
use iolab_model::steps::BackendKind;
use iolab_report::Format;

pub use plan::plan;

use crate::cmd::flags::{BackendFlags, KnobFlags};
use crate::CliError;

/// Flags of `iolab batch`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A preset whose batch runs to execute (e.g. `e1-actors`, `e3-futures`).
    pub preset: Option<String>,
    /// Executor model(s), comma-separated: sequential, pool, thread-per-request,
    /// loop-blocking, loop-offload, loop-async [default: every built-in one].
    #[arg(long, value_delimiter = ',')]
    pub model: Vec<String>,
    /// Run E1's master/worker with these workers, comma-separated:
    /// blocking, shared-pool, timer [default with `--tasks e1`: all three].
    #[arg(long, value_delimiter = ',', value_name = "KIND")]
    pub worker: Vec<String>,
    /// Threads D of the shared pool of `shared-pool` workers [default: Akka's 3 x cores, 8..64].
    #[arg(long, value_name = "D")]
    pub shared_pool: Option<u32>,
    /// The tasks: `calls` (E3: N calls of a service sleeping MS) or `e1`
    /// (100 CPU + 100 IO tasks, E1's exact lists) or `e1:CPU:IO` (other counts).
    #[arg(long, value_name = "SPEC", default_value = "calls")]
    pub tasks: String,
    /// Number of calls, comma-separated for a sweep (e.g. 1,10,100,1000,10000).
    #[arg(long, value_delimiter = ',', value_name = "N")]
    pub calls: Vec<u64>,
    /// Service time of one call, ms [default: 1000].
    #[arg(long)]
    pub ms: Option<f64>,
    #[arg(long, value_name = "BACKEND", default_value = "sleep", value_parser = parse_io, help = io_help())]
    pub io: BackendKind,
    /// Seed of the task draw (always recorded).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Multiply every sleep and CPU term count by F (0 < F <= 1).
    #[arg(long, value_name = "F")]
    pub scale: Option<f64>,
    /// Stop handing out tasks after this long per run (e.g. 90s, 15m).
    #[arg(long, value_name = "DURATION", default_value = "15m")]
    pub max_time: String,
    /// Print `iolab.batch/1` JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Record who held what (queued, running on which thread, waiting on IO) for tasks 0..N of each run, in the JSON's `spans` [default: a preset's `[spans]`, else off].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub spans: Option<u32>,
    /// Knobs; `--workers` takes a list: W of a master (E1), else event-loop
    /// threads, one run each.
    #[command(flatten)]
    pub knobs: KnobFlags,
    /// Where `--io http|pg` tasks go (through a pool of `--pg-pool` connections).
    #[command(flatten)]
    pub backends: BackendFlags,
}

/// Most calls one run may have (a million tasks take ~0.5 GB on `loop-async`).
const MAX_CALLS: u64 = iolab_model::limits::MAX_BATCH_TASKS;

/// Run `iolab batch`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let max_time = parse_duration(&args.max_time).map_err(|e| {
        CliError::usage(format!(
            "--max-time '{}': {e} (e.g. 90s, 15m)",
            args.max_time
        ))
    })?;
    if max_time.is_zero() {
        // Nothing would be handed out: "tasks 10 failed 0" with none run.
        return Err(CliError::usage(format!(
            "--max-time '{}': give a time above zero (e.g. 90s, 15m)",
            args.max_time
        )));
    }
    let runs = plan(&args)?;
    let mut ios: Vec<Io> = Vec::new();
    for (_, spec) in batches(&runs) {
        if !ios.iter().any(|io| io.kind() == spec.io_backend) {
            ios.push(io_for(spec.io_backend, &args)?);
        }
    }
    let mut results = Vec::with_capacity(runs.len());
    for (k, (r, spec)) in batches(&runs).enumerate() {
        if !args.json {
            eprintln!(
                "run {}/{}: {} {}",
                k + 1,
                runs.len(),
                r.model,
                describe(r, spec)
            );
        }
        let launch = Launch::of(r)?;
        let mut res = with_deadline(max_time, |cancel| match &launch {
            Launch::Runtime(m) => iolab_lab::targets::runtime::run_batch(m, r, spec, cancel)
                .unwrap_or_else(|e| BatchResult {
                    model: Some(r.model),
                    failure: Some(e.to_string()),
                    ..Default::default()
                }),
            _ => {
                let io = ios.iter().find(|io| io.kind() == spec.io_backend);
                let io = io.expect("a client for every run's backend");
                let spans = args.spans.or(r.spans);
                iolab_batch::run_traced(spec, r.model, &r.params, io, spans, cancel)
            }
        });
        res.params
            .insert("scale".into(), serde_json::Value::from(r.scale));
        results.push(res);
    }
    let format = Format::json_or_text(args.json);
    let bytes = iolab_report::batch::render(&BatchFile::new(results), format)
        .map_err(|e| CliError::Failed(e.into()))?;
    super::report::print(&bytes);
    Ok(ExitCode::SUCCESS)
}

/// The clients IO tasks of `kind` use; a backend without an address is a usage error.
fn io_for(kind: BackendKind, args: &Args) -> Result<Io, CliError> {
    if kind.is_sleep() {
        return Ok(Io::sleep());
    }
    let params = args.knobs.sweep(&["workers"]).remove(0);
    let config = args.backends.config(&params);
    config.validate().map_err(CliError::usage)?;
    Io::new(kind, Arc::new(Backends::new(config))).map_err(CliError::usage)
}

/// `--io`'s help, from the backends' table: the kinds a task can wait on.
fn io_help() -> String {
    let kinds: Vec<String> = BackendKind::timed()
        .map(|k| {
            let def = k.def();
            let pool = def.pool_knob.map_or(String::new(), |p| {
                format!(", through a pool of --{} connections", p.replace('_', "-"))
            });
            format!("`{k}` ({}{pool})", def.about)
        })
        .collect();
    let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
    format!(
        "Where IO tasks wait, one call each: {}.",
        iolab_model::steps::listed(&kinds)
    )
}

/// `--io` naming no backend IO tasks can wait on.
#[derive(Debug, thiserror::Error)]
#[error("'{0}': IO tasks go to {timed}", timed = iolab_model::steps::listed(&BackendKind::timed().map(BackendKind::as_str).collect::<Vec<_>>()))]
struct NotTimed(String);

fn parse_io(s: &str) -> Result<BackendKind, NotTimed> {
    BackendKind::named(s)
        .filter(|k| k.is_timed())
        .ok_or_else(|| NotTimed(s.to_string()))
}

/// Every run with its batch (a plan of `iolab batch` has nothing else).
fn batches(runs: &[RunSpec]) -> impl Iterator<Item = (&RunSpec, &iolab_model::batch::BatchSpec)> {
    runs.iter().filter_map(|r| match &r.work {
        Work::Batch(b) => Some((r, b)),
        Work::Http(_) => None,
    })
}

/// `calls=100 ms=1000 threads=8` for the progress line.
fn describe(r: &RunSpec, spec: &iolab_model::batch::BatchSpec) -> String {
    let tasks = match &spec.tasks {
        TaskMix::Calls { n, ms } => format!("calls={n} ms={ms}"),
        TaskMix::Mixed { cpu, io, .. } => format!("cpu={cpu} io={io}"),
    };
    let who = match &spec.master {
        Some(m) => format!("worker={} workers={}", m.worker, m.workers),
        None => r.params.label().replace(',', " "),
    };
    format!("{tasks} {who} scale={}", r.scale)
        .trim()
        .to_string()
}

/// Run `f` with a cancel flag that is raised after `limit`.
fn with_deadline(limit: Duration, f: impl FnOnce(&AtomicBool) -> BatchResult) -> BatchResult {
    let cancel = Arc::new(AtomicBool::new(false));
    let over = Arc::new((Mutex::new(false), Condvar::new()));
    let watchdog = {
        let (cancel, over) = (cancel.clone(), over.clone());
        std::thread::spawn(move || {
            let (lock, cv) = &*over;
            let done = lock.lock().unwrap_or_else(|e| e.into_inner());
            let (done, _) = cv
                .wait_timeout_while(done, limit, |d| !*d)
                .unwrap_or_else(|e| e.into_inner());
            if !*done {
                cancel.store(true, Ordering::Relaxed);
            }
        })
    };
    let mut res = f(&cancel);
    *over.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
    over.1.notify_all();
    let _ = watchdog.join();
    if cancel.load(Ordering::Relaxed) {
        let note = format!(
            "stopped by --max-time {}",
            iolab_model::format_duration(limit)
        );
        res.failure = Some(match res.failure.take() {
            Some(f) => format!("{note}: {f}"),
            None => note,
        });
    }
    res
}
