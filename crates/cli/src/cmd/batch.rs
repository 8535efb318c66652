//! `iolab batch`: in-process batches (E1 master/worker, E3 futures). Flags or
//! a preset become a list of [`BatchRun`]s (sweeps expanded), each run by
//! `iolab_batch::run`, then printed as a table or as `iolab.batch/1` JSON.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use iolab_backends::{BackendConfig, Backends};
use iolab_batch::io::Io;
use iolab_model::batch::{
    BatchFile, BatchResult, BatchSpec, MasterSpec, TaskMix, WorkerKind, DEFAULT_SEED,
};
use iolab_model::experiment::Work;
use iolab_model::steps::BackendKind;
use iolab_model::{parse_duration, ModelKind, ModelParams};
use iolab_report::Format;

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
    /// `pool` threads (E3: 8 = fixed pool, 2 x cores = global pool) [default: 200].
    #[arg(long, value_name = "P")]
    pub threads: Option<u32>,
    /// With a master (E1): workers W, comma-separated for a sweep (e.g.
    /// 4,8,12,16,20,24) [default: cores]. Without: event-loop threads.
    #[arg(long, value_delimiter = ',', value_name = "W")]
    pub workers: Vec<u32>,
    /// Run E1's master/worker with these workers, comma-separated:
    /// blocking, shared-pool, timer [default with `--tasks e1`: all three].
    #[arg(long, value_delimiter = ',', value_name = "KIND")]
    pub worker: Vec<String>,
    /// Threads D of the shared pool of `shared-pool` workers [default: Akka's 3 x cores, 8..64].
    #[arg(long, value_name = "D")]
    pub shared_pool: Option<u32>,
    /// `loop-offload` blocking pool size [default: 64, Kotlin's Dispatchers.IO].
    #[arg(long)]
    pub offload: Option<u32>,
    /// `thread-per-request` cap on threads alive (Scala `blocking{}`: cores + 256) [default: none].
    #[arg(long)]
    pub max_threads: Option<u32>,
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
    /// Where IO tasks wait: `sleep` (the embedded timer, as published),
    /// `http` (one call each to iolab's delay service) or `pg` (`SELECT
    /// pg_sleep` on PostgreSQL, through a pool of --pg-pool connections).
    #[arg(long, value_name = "BACKEND", default_value = "sleep", value_parser = parse_io)]
    pub io: BackendKind,
    /// PostgreSQL for `--io pg` [default: $IOLAB_PG].
    #[arg(long, value_name = "URL", env = "IOLAB_PG", hide_env_values = true)]
    pub pg: Option<String>,
    /// PostgreSQL connections of the pool [default: 10, HikariCP's].
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub pg_pool: u32,
    /// Delay service for `--io http` [default: $IOLAB_HTTP_BACKEND].
    #[arg(
        long,
        value_name = "URL",
        env = "IOLAB_HTTP_BACKEND",
        hide_env_values = true
    )]
    pub http_backend: Option<String>,
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
}

/// One batch to run: the spec (already scaled) and the executor.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchRun {
    /// The tasks and the master set-up.
    pub spec: BatchSpec,
    /// Executor model (recorded only when there is a master).
    pub model: ModelKind,
    /// Its knobs.
    pub params: ModelParams,
    /// The time-scale already applied to `spec`.
    pub scale: f64,
}

/// Most calls one run may have (a million tasks take ~0.5 GB on `loop-async`).
const MAX_CALLS: u64 = 10_000_000;

/// Run `iolab batch`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let max_time = parse_duration(&args.max_time).map_err(|e| {
        CliError::usage(format!(
            "--max-time '{}': {e} (e.g. 90s, 15m)",
            args.max_time
        ))
    })?;
    let runs = plan(&args)?;
    let mut ios: Vec<Io> = Vec::new();
    for r in &runs {
        if !ios.iter().any(|io| io.kind() == r.spec.io_backend) {
            ios.push(io_for(r.spec.io_backend, &args)?);
        }
    }
    let mut results = Vec::with_capacity(runs.len());
    for (k, r) in runs.iter().enumerate() {
        if !args.json {
            eprintln!("run {}/{}: {} {}", k + 1, runs.len(), r.model, describe(r));
        }
        let mut res = with_deadline(max_time, |cancel| {
            let io = ios.iter().find(|io| io.kind() == r.spec.io_backend);
            let io = io.expect("a client for every run's backend");
            iolab_batch::run_with_io(&r.spec, r.model, &r.params, io, cancel)
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
    let config = BackendConfig {
        pg: args.pg.clone(),
        pg_pool: args.pg_pool,
        http: args.http_backend.clone(),
        ..BackendConfig::default()
    };
    config.validate().map_err(CliError::usage)?;
    Io::new(kind, Arc::new(Backends::new(config))).map_err(CliError::usage)
}

fn parse_io(s: &str) -> Result<BackendKind, String> {
    match s {
        "sleep" => Ok(BackendKind::Sleep),
        "http" => Ok(BackendKind::Http),
        "pg" => Ok(BackendKind::Pg),
        _ => Err(format!("'{s}': IO tasks go to sleep, http or pg")),
    }
}

/// Turn the flags (or the preset) into the list of runs, sweeps expanded.
pub fn plan(args: &Args) -> Result<Vec<BatchRun>, CliError> {
    let scale = match args.scale {
        Some(f) if !(f > 0.0 && f <= 1.0) => {
            return Err(CliError::usage(format!(
                "--scale {f}: must be in (0, 1], e.g. 0.01"
            )))
        }
        s => s,
    };
    if let Some(name) = &args.preset {
        return preset_runs(name, scale, args);
    }
    let scale = scale.unwrap_or(1.0);
    let seed = args.seed.unwrap_or(DEFAULT_SEED);
    let cores = iolab_batch::cores();
    let (mix_base, is_e1) = tasks_spec(args)?;
    let workers_list = |default: Option<u32>| -> Result<Vec<Option<u32>>, CliError> {
        if args.workers.is_empty() {
            return Ok(vec![default]);
        }
        args.workers
            .iter()
            .map(|&w| match w {
                1..=10_000 => Ok(Some(w)),
                _ => Err(CliError::usage(format!("--workers {w}: must be 1..=10000"))),
            })
            .collect()
    };
    for (flag, v, max) in [
        ("--threads", args.threads, 100_000),
        ("--shared-pool", args.shared_pool, 10_000),
        ("--offload", args.offload, 100_000),
        ("--max-threads", args.max_threads, 1_000_000),
    ] {
        if let Some(v) = v {
            if v == 0 || v > max {
                return Err(CliError::usage(format!("{flag} {v}: must be 1..={max}")));
            }
        }
    }
    let mixes: Vec<TaskMix> = match &mix_base {
        TaskMix::Calls { ms, .. } => {
            let calls = if args.calls.is_empty() {
                vec![100]
            } else {
                args.calls.clone()
            };
            calls
                .into_iter()
                .map(|n| match n {
                    1..=MAX_CALLS => Ok(TaskMix::Calls { n, ms: *ms }),
                    _ => Err(CliError::usage(format!(
                        "--calls {n}: must be 1..={MAX_CALLS}"
                    ))),
                })
                .collect::<Result<_, _>>()?
        }
        mixed => {
            if !args.calls.is_empty() || args.ms.is_some() {
                return Err(CliError::usage(
                    "--calls/--ms apply to --tasks calls; E1 tasks use E1's own lists",
                ));
            }
            vec![mixed.clone()]
        }
    };

    let mut runs = Vec::new();
    let master_mode = is_e1 || !args.worker.is_empty();
    if master_mode {
        if !args.model.is_empty() {
            return Err(CliError::usage(
                "--model applies to plain executors; master/worker runs choose with --worker blocking|shared-pool|timer",
            ));
        }
        let kinds: Vec<WorkerKind> = if args.worker.is_empty() {
            WorkerKind::ALL.to_vec()
        } else {
            args.worker
                .iter()
                .map(|w| {
                    w.parse()
                        .map_err(|e| CliError::usage(format!("--worker: {e}")))
                })
                .collect::<Result<_, _>>()?
        };
        for kind in kinds {
            for w in workers_list(Some(cores))? {
                for mix in &mixes {
                    runs.push(BatchRun {
                        spec: BatchSpec {
                            tasks: mix.scaled(scale),
                            master: Some(MasterSpec {
                                workers: w.unwrap_or(cores),
                                worker: kind,
                                shared_pool: args.shared_pool,
                            }),
                            seed,
                            io_backend: args.io,
                        },
                        model: worker_model(kind),
                        params: ModelParams::default(),
                        scale,
                    });
                }
            }
        }
    } else {
        if args.shared_pool.is_some() {
            return Err(CliError::usage(
                "--shared-pool applies to --worker shared-pool",
            ));
        }
        let models: Vec<ModelKind> = if args.model.is_empty() {
            ModelKind::BUILT_IN.to_vec()
        } else {
            args.model
                .iter()
                .map(|m| {
                    m.parse::<ModelKind>()
                        .map_err(|e| CliError::usage(format!("--model: {e}")))
                })
                .collect::<Result<_, _>>()?
        };
        if models.contains(&ModelKind::Virtual) {
            return Err(CliError::usage(
                "--model virtual needs a JVM target; batches run the built-in models",
            ));
        }
        for model in models {
            for w in workers_list(None)? {
                for mix in &mixes {
                    runs.push(BatchRun {
                        spec: BatchSpec {
                            tasks: mix.scaled(scale),
                            master: None,
                            seed,
                            io_backend: args.io,
                        },
                        model,
                        params: ModelParams {
                            threads: args.threads,
                            workers: w,
                            offload: args.offload,
                            max_threads: args.max_threads,
                            ..Default::default()
                        },
                        scale,
                    });
                }
            }
        }
    }
    Ok(runs)
}

/// The unscaled task mix of `--tasks`, and whether it is E1's.
fn tasks_spec(args: &Args) -> Result<(TaskMix, bool), CliError> {
    let spec = args.tasks.trim();
    if spec == "calls" {
        let ms = args.ms.unwrap_or(1000.0);
        if !(0.0..=3_600_000.0).contains(&ms) {
            return Err(CliError::usage(format!("--ms {ms}: must be 0..=3600000")));
        }
        return Ok((TaskMix::Calls { n: 100, ms }, false));
    }
    let mut parts = spec.split(':');
    if parts.next() != Some("e1") {
        return Err(CliError::usage(format!(
            "--tasks '{spec}': expected 'calls', 'e1' or 'e1:CPU:IO' (e.g. e1:100:100)"
        )));
    }
    let counts: Vec<&str> = parts.collect();
    let (cpu, io) = match counts.as_slice() {
        [] => (100, 100),
        [c, i] => match (c.parse::<u32>(), i.parse::<u32>()) {
            (Ok(c), Ok(i)) if c + i > 0 && c <= 100_000 && i <= 100_000 => (c, i),
            _ => {
                return Err(CliError::usage(format!(
                    "--tasks '{spec}': CPU and IO counts must be 0..=100000, not both 0 (e.g. e1:100:100)"
                )))
            }
        },
        _ => return Err(CliError::usage(format!("--tasks '{spec}': expected e1 or e1:CPU:IO"))),
    };
    let TaskMix::Mixed {
        cpu_terms, io_ms, ..
    } = TaskMix::e1()
    else {
        unreachable!("e1 is a mixed batch")
    };
    Ok((
        TaskMix::Mixed {
            cpu,
            io,
            cpu_terms,
            io_ms,
        },
        true,
    ))
}

/// The model a worker kind stands for, for the report: blocking workers are a
/// pool, shared-pool workers offload to a pool, timer workers are non-blocking.
fn worker_model(kind: WorkerKind) -> ModelKind {
    match kind {
        WorkerKind::Blocking => ModelKind::Pool,
        WorkerKind::SharedPool => ModelKind::LoopOffload,
        WorkerKind::Timer => ModelKind::LoopAsync,
    }
}

/// The batch runs of a preset, loaded at `scale` (the preset scales them).
fn preset_runs(name: &str, scale: Option<f64>, args: &Args) -> Result<Vec<BatchRun>, CliError> {
    let overridden = !args.model.is_empty()
        || args.threads.is_some()
        || !args.workers.is_empty()
        || !args.worker.is_empty()
        || args.shared_pool.is_some()
        || args.offload.is_some()
        || args.max_threads.is_some()
        || args.tasks != "calls"
        || !args.calls.is_empty()
        || args.ms.is_some();
    if overridden {
        return Err(CliError::usage(format!(
            "preset '{name}' sets its own runs; with a preset only --scale, --seed, --max-time and --json apply"
        )));
    }
    let plan = iolab_lab::preset::load_plan(name, scale).map_err(CliError::usage)?;
    let runs: Vec<BatchRun> = plan
        .runs
        .iter()
        .filter_map(|r| match &r.work {
            Work::Batch(spec) => Some(BatchRun {
                spec: BatchSpec {
                    seed: args.seed.unwrap_or(spec.seed),
                    io_backend: if args.io.is_sleep() {
                        spec.io_backend
                    } else {
                        args.io
                    },
                    ..spec.clone()
                },
                model: r.model,
                params: r.params.clone(),
                scale: r.scale,
            }),
            Work::Http(_) => None,
        })
        .collect();
    if runs.is_empty() {
        return Err(CliError::usage(format!(
            "preset '{name}' has no batch runs; run it with 'iolab run {name}'"
        )));
    }
    Ok(runs)
}

/// `calls=100 ms=1000 threads=8` for the progress line.
fn describe(r: &BatchRun) -> String {
    let tasks = match &r.spec.tasks {
        TaskMix::Calls { n, ms } => format!("calls={n} ms={ms}"),
        TaskMix::Mixed { cpu, io, .. } => format!("cpu={cpu} io={io}"),
    };
    let who = match &r.spec.master {
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
