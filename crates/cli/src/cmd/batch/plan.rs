//! `iolab batch` flags (or a preset) turned into the list of runs, sweeps
//! expanded: E1's master/worker runs (`--tasks e1`, `--worker`), plain
//! executor runs (`--model`), or a preset's batch runs.

use iolab_model::batch::{BatchSpec, MasterSpec, TaskMix, WorkerKind, DEFAULT_SEED};
use iolab_model::experiment::{RunSpec, Work};
use iolab_model::{ModelKind, ModelParams};

use super::{Args, MAX_CALLS};
use crate::cmd::flags::KnobFlags;
use crate::CliError;

/// Turn the flags (or the preset) into the list of runs, sweeps expanded.
pub fn plan(args: &Args) -> Result<Vec<RunSpec>, CliError> {
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
    if args.shared_pool.is_some_and(|d| !(1..=10_000).contains(&d)) {
        return Err(CliError::usage("--shared-pool: must be 1..=10000"));
    }
    let (mix, is_e1) = tasks_spec(args)?;
    let mixes = mixes(args, &mix)?;
    let specs = if is_e1 || !args.worker.is_empty() {
        master_specs(args, &mixes)?
    } else {
        executor_specs(args, &mixes)?
    };
    let scale = scale.unwrap_or(1.0);
    Ok(specs
        .into_iter()
        .map(|(model, params, spec)| {
            // Named like a preset's runs.
            RunSpec::of_model(model, params, scale, Work::Batch(spec.scaled(scale)))
        })
        .collect())
}

/// The task mixes: one per `--calls` value, or E1's one.
fn mixes(args: &Args, mix: &TaskMix) -> Result<Vec<TaskMix>, CliError> {
    match mix {
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
                .collect()
        }
        mixed => {
            if !args.calls.is_empty() || args.ms.is_some() {
                return Err(CliError::usage(
                    "--calls/--ms apply to --tasks calls; E1 tasks use E1's own lists",
                ));
            }
            Ok(vec![mixed.clone()])
        }
    }
}

type Unscaled = (ModelKind, ModelParams, BatchSpec);

/// E1's master/worker: one run per worker kind, W and mix.
fn master_specs(args: &Args, mixes: &[TaskMix]) -> Result<Vec<Unscaled>, CliError> {
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
    let cores = iolab_batch::cores();
    let workers = match args.knobs.values("workers") {
        [] => vec![cores],
        w => w.to_vec(),
    };
    let mut out = Vec::new();
    for kind in kinds {
        for &w in &workers {
            for mix in mixes {
                let master = MasterSpec {
                    workers: w,
                    worker: kind,
                    shared_pool: args.shared_pool,
                };
                out.push((
                    worker_model(kind),
                    ModelParams::default(),
                    spec(args, mix, Some(master)),
                ));
            }
        }
    }
    Ok(out)
}

/// Plain executors: one run per model, `--workers` value and mix.
fn executor_specs(args: &Args, mixes: &[TaskMix]) -> Result<Vec<Unscaled>, CliError> {
    if args.shared_pool.is_some() {
        return Err(CliError::usage(
            "--shared-pool applies to --worker shared-pool",
        ));
    }
    let models: Vec<ModelKind> = if args.model.is_empty() {
        ModelKind::built_in().collect()
    } else {
        args.model
            .iter()
            .map(|m| {
                m.parse::<ModelKind>()
                    .map_err(|e| CliError::usage(format!("--model: {e}")))
            })
            .collect::<Result<_, _>>()?
    };
    if let Some(m) = models.iter().find(|m| !m.def().built_in) {
        return Err(CliError::usage(format!(
            "--model {m} is not built in; batches run the built-in models (or a batch runtime's, from a preset)"
        )));
    }
    let mut out = Vec::new();
    for model in models {
        for params in args.knobs.sweep(&[]) {
            for mix in mixes {
                out.push((model, params.clone(), spec(args, mix, None)));
            }
        }
    }
    Ok(out)
}

fn spec(args: &Args, mix: &TaskMix, master: Option<MasterSpec>) -> BatchSpec {
    BatchSpec {
        tasks: mix.clone(),
        master,
        seed: args.seed.unwrap_or(DEFAULT_SEED),
        io_backend: args.io,
    }
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
fn preset_runs(name: &str, scale: Option<f64>, args: &Args) -> Result<Vec<RunSpec>, CliError> {
    let overridden = !args.model.is_empty()
        || args.knobs != KnobFlags::default()
        || !args.worker.is_empty()
        || args.shared_pool.is_some()
        || args.tasks != "calls"
        || !args.calls.is_empty()
        || args.ms.is_some();
    if overridden {
        return Err(CliError::usage(format!(
            "preset '{name}' sets its own runs; with a preset only --scale, --seed, --max-time and --json apply"
        )));
    }
    let plan = iolab_lab::preset::load_plan(name, scale)?;
    let runs: Vec<RunSpec> = plan
        .runs
        .into_iter()
        .filter_map(|mut r| {
            let Work::Batch(spec) = &mut r.work else {
                return None;
            };
            spec.seed = args.seed.unwrap_or(spec.seed);
            if !args.io.is_sleep() {
                spec.io_backend = args.io;
            }
            Some(r)
        })
        .collect();
    if runs.is_empty() {
        return Err(CliError::usage(format!(
            "preset '{name}' has no batch runs; run it with 'iolab run {name}'"
        )));
    }
    Ok(runs)
}
