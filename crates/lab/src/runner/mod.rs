//! The experiment runner: for each run, start its target, verify it, warm it
//! up, measure it while sampling telemetry, stop it, let its sockets drain,
//! and write the results folder after every run.
//!
//! Failures of a run (no start, failed verify, died mid-run) are recorded as
//! its outcome and the experiment goes on; only an unusable plan or results
//! folder is an error. Cancelling (Ctrl-C) stops the current run, stops the
//! target, and writes what was measured with `complete: false`.
//!
//! One file per stage: [`http`] (a served run and its repetitions),
//! [`load`] (the attacks and the settle between them), [`gate`] (the verify
//! gate), [`held`] (held WebSockets instead of requests), [`foreign`] (a
//! user's own service: no gate, its own request),
//! [`batch`] (batches, in process or on a batch runtime), [`slots`] (when
//! each run starts in a sharded experiment), [`spans`] (who held what).

mod batch;
mod foreign;
mod gate;
mod held;
mod http;
mod load;
pub mod slots;
mod spans;

pub(crate) use http::spread;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use iolab_model::environment::Environment;
use iolab_model::experiment::{ExperimentPlan, HttpWork, RunSpec, Work};
use iolab_model::runs::{Outcome, RunRecord, RunsFile, RUNS_SCHEMA};
use iolab_model::verify::VerifyReport;

use crate::estimate::estimate;
use crate::progress::Observer;
use crate::services::{self, Addresses, Needs, ServiceError};
use crate::targets::{Defaults, Launch};
use crate::{environment, results};

/// How to run a plan; everything here is about this machine and this
/// invocation, nothing about the experiment itself.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The results folder (created, or claimed if it exists: it must hold
    /// no `runs.json` and no other run's claim).
    pub out_dir: PathBuf,
    /// The `iolab` binary that serves built-in targets (`None` = this one).
    pub exe: Option<PathBuf>,
    /// Pin target and generator to different CPUs when there are two or more.
    pub pin: bool,
    /// Run `iolab verify` once per distinct target before measuring it.
    pub verify: bool,
    /// Set to stop (Ctrl-C); the runner also checks it between stages.
    pub cancel: Arc<AtomicBool>,
    /// The command line, recorded in the environment.
    pub command_line: String,
    /// Longest wait for a target to print its URL and answer `/health`.
    pub start_timeout: Duration,
    /// Time a target gets to exit after SIGTERM before SIGKILL.
    pub grace: Duration,
    /// Longest wait for the previous target's sockets to drain.
    pub drain_max: Duration,
    /// Send only one shard of every run, each from its slot (`--shard`, `--start-at`).
    pub sharding: Option<slots::Sharding>,
}

impl RunOptions {
    /// Defaults for writing into `out_dir`.
    pub fn new(out_dir: impl Into<PathBuf>) -> RunOptions {
        RunOptions {
            out_dir: out_dir.into(),
            exe: None,
            pin: true,
            verify: true,
            cancel: Arc::new(AtomicBool::new(false)),
            command_line: String::new(),
            start_timeout: Duration::from_secs(15),
            grace: Duration::from_millis(1500),
            drain_max: Duration::from_secs(3),
            sharding: None,
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// Why an experiment could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The plan or options cannot be used (nothing was started).
    #[error("{0}")]
    Invalid(String),
    /// The results folder could not be written.
    #[error("{}: {source}", path.display())]
    Io {
        /// File or folder.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
}

/// Run a whole experiment, writing `runs.json` and `environment.json` into
/// `opts.out_dir` after every run; results that could not be saved are an
/// error (see [`run_keeping`] to keep them anyway).
pub fn run(
    plan: &ExperimentPlan,
    opts: &RunOptions,
    observer: &dyn Observer,
) -> Result<RunsFile, LabError> {
    let ran = run_keeping(plan, opts, observer)?;
    match ran.unsaved {
        Some(e) => Err(e),
        None => Ok(ran.file),
    }
}

/// A finished experiment, and why its results could not be saved, if so.
#[derive(Debug)]
pub struct Ran {
    /// Every run measured.
    pub file: RunsFile,
    /// The last failed save (a full disk). A run's measurement is never
    /// thrown away for it: later saves retry, the caller still prints the
    /// table, and a stale `runs.json` is removed so that no file claims to
    /// be these results.
    pub unsaved: Option<LabError>,
}

/// [`run`], keeping the measured runs when the results folder cannot be
/// written; only a folder unwritable before anything ran is an `Err`.
pub fn run_keeping(
    plan: &ExperimentPlan,
    opts: &RunOptions,
    observer: &dyn Observer,
) -> Result<Ran, LabError> {
    preflight(plan, opts)?;
    // Runtime folders: build each once, before the first run.
    crate::targets::runtime::prepare(plan).map_err(|e| LabError::Invalid(e.to_string()))?;
    let exe = match &opts.exe {
        Some(p) => p.clone(),
        None => std::env::current_exe()
            .map_err(|e| LabError::Invalid(format!("cannot find the iolab binary: {e}")))?,
    };
    let env = environment(&opts.command_line, opts.pin && plan.pin);
    // The real backends the steps call: reused from IOLAB_*, or started now
    // and stopped when `backends` drops (end, error or Ctrl-C).
    let backends = services::start(&Needs::of_plan(plan), &Addresses::from_env(), &|m: &str| {
        observer.note(m)
    })
    .map_err(|e| match e {
        ServiceError::Missing(m) => LabError::Invalid(m),
        ServiceError::Failed(m) => LabError::Io {
            path: PathBuf::from("services"),
            source: std::io::Error::other(m),
        },
    })?;
    let mut file = RunsFile {
        schema: RUNS_SCHEMA.to_string(),
        plan: plan.clone(),
        runs: Vec::new(),
        complete: false,
        started_utc: results::rfc3339(SystemTime::now()),
        finished_utc: None,
        environment: Environment {
            services: backends.info().to_vec(),
            ..env
        },
    };
    save(&opts.out_dir, &file)?;
    observer.experiment_started(plan, plan.runs.len(), estimate(plan));
    let ctx = Ctx::new(
        plan,
        opts,
        observer,
        exe,
        &file.environment,
        &backends.addresses,
    );
    let total = plan.runs.len();
    for (index, spec) in plan.runs.iter().enumerate() {
        if opts.cancelled() {
            break;
        }
        file.runs.push(ctx.run(index, spec));
        // A failed save (a full disk) is tried again after the next run;
        // the last save decides, and no measurement stops for it.
        let _ = save(&opts.out_dir, &file);
        observer.run_finished(index, total, file.runs.last().expect("just pushed"));
    }
    file.complete = !opts.cancelled()
        && file.runs.len() == total
        && file.runs.iter().all(|r| r.outcome != Outcome::Interrupted);
    file.finished_utc = Some(results::rfc3339(SystemTime::now()));
    let unsaved = save(&opts.out_dir, &file).err();
    if unsaved.is_some() {
        // The last saved runs.json holds fewer runs: gone, it cannot be
        // taken for these results.
        let _ = std::fs::remove_file(opts.out_dir.join(results::RUNS_JSON));
    }
    backends.stop();
    observer.experiment_finished(&file);
    Ok(Ran { file, unsaved })
}

fn save(dir: &Path, file: &RunsFile) -> Result<(), LabError> {
    results::save(dir, file).map_err(|source| LabError::Io {
        path: dir.join(results::RUNS_JSON),
        source,
    })
}

/// Refuse what cannot work before anything starts.
fn preflight(plan: &ExperimentPlan, opts: &RunOptions) -> Result<(), LabError> {
    if plan.runs.is_empty() {
        return Err(LabError::Invalid(format!(
            "preset '{}' has no runs",
            plan.name
        )));
    }
    for spec in &plan.runs {
        if let Work::Http(w) = &spec.work {
            check_http(w).map_err(|(field, e)| {
                LabError::Invalid(format!("run '{}': field '{field}': {e}", spec.name))
            })?;
        }
    }
    if let Some(s) = &opts.sharding {
        slots::check(plan, s).map_err(|e| LabError::Invalid(e.to_string()))?;
    }
    // One folder, one run: the claim has exactly one winner, so a second
    // run with the same --out is refused even when both start together.
    iolab_files::claim(&opts.out_dir, results::RUNS_JSON).map_err(|source| {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            LabError::Invalid(source.to_string())
        } else {
            LabError::Io {
                path: opts.out_dir.clone(),
                source,
            }
        }
    })
}

/// The load of one HTTP run checked as the generator will check it: every
/// bound of [`iolab_model::limits`] and the machine's open files
/// ([`iolab_loadgen::machine::check_bounds`]), then the generator's own validation.
/// The error names the preset field at fault (`load.rate`), never a flag:
/// presets expand through this too, so `--dry-run` refuses what a run would.
pub fn check_http(w: &HttpWork) -> Result<(), (&'static str, String)> {
    if let Some(load) = &w.held {
        return held::check_held(w, load);
    }
    let probe = load::attack_plan("http://127.0.0.1:1", w, w.driver.clone(), &[]);
    iolab_loadgen::machine::check_bounds(&probe).map_err(|f| (f.field.preset(), f.message))?;
    iolab_loadgen::validate(&probe).map_err(|e| ("load", e.to_string()))
}

/// What every run of one experiment shares.
struct Ctx<'a> {
    plan: &'a ExperimentPlan,
    opts: &'a RunOptions,
    observer: &'a dyn Observer,
    exe: PathBuf,
    cores: u32,
    target_cpus: Vec<usize>,
    gen_cpus: Vec<usize>,
    ephemeral: usize,
    /// Verify reports by target identity, so each target is verified once.
    verified: Mutex<HashMap<String, VerifyReport>>,
    /// The real backends of this experiment (only those its steps call).
    backends: &'a Addresses,
    /// A sharded experiment's attack starts, `[run][rep]` (empty otherwise).
    slots: Vec<Vec<u64>>,
    /// The target's telemetry as it is sampled, for the observer.
    telemetry: iolab_telemetry::Tap,
}

impl<'a> Ctx<'a> {
    fn new(
        plan: &'a ExperimentPlan,
        opts: &'a RunOptions,
        observer: &'a dyn Observer,
        exe: PathBuf,
        env: &Environment,
        backends: &'a Addresses,
    ) -> Ctx<'a> {
        let cpus = |role: &str| env.pinning.get(role).cloned().unwrap_or_default();
        Ctx {
            plan,
            opts,
            observer,
            exe,
            cores: env.cores,
            target_cpus: cpus("target"),
            gen_cpus: cpus("generator"),
            ephemeral: (env.port_range.1.saturating_sub(env.port_range.0)) as usize,
            verified: Mutex::new(HashMap::new()),
            backends,
            slots: opts
                .sharding
                .as_ref()
                .map_or_else(Vec::new, |s| slots::slots(plan, s)),
            telemetry: Default::default(),
        }
    }

    /// Where repetition `rep` of run `index` starts in a sharded experiment.
    fn slot(&self, index: usize, rep: u32) -> Option<u64> {
        self.slots.get(index)?.get(rep as usize).copied()
    }

    /// One run, all its repetitions, with its prediction.
    fn run(&self, index: usize, spec: &RunSpec) -> RunRecord {
        let launch = Launch::of(spec);
        let mut record = match (&spec.work, &launch) {
            (_, Err(e)) => RunRecord::new(
                spec.clone(),
                Outcome::StartFailed {
                    detail: e.to_string(),
                },
            ),
            (Work::Http(w), Ok(l)) => self.http_run(index, spec, w, l),
            (Work::Batch(b), Ok(l)) => self.batch_run(index, spec, b, l),
        };
        let cores = self.target_cores();
        // A launch that failed has no manifest: the knob table's defaults.
        let defaults = launch
            .as_ref()
            .map_or(Defaults::BuiltIn, |l| Defaults::of_launch(spec, l));
        record.prediction = defaults.predict(spec, cores);
        record.host = launch.is_ok().then(|| defaults.host(cores));
        record.effective_params = launch
            .is_ok()
            .then(|| defaults.effective(spec, cores))
            .filter(|p| *p != spec.params);
        record.knobs = launch.is_ok().then(|| defaults.knobs(spec, cores));
        record
    }

    /// Cores the target may use: the ones it is pinned to, else the machine's.
    fn target_cores(&self) -> u32 {
        match self.target_cpus.len() {
            0 => self.cores,
            n => n as u32,
        }
    }
}

/// The environment this runner records, with the CPUs target and generator
/// are pinned to.
pub fn environment(command_line: &str, pin: bool) -> Environment {
    let mut env = environment::collect(command_line);
    let (t, g) = environment::pinning(pin);
    if !t.is_empty() {
        env.pinning.insert("target".into(), t);
        env.pinning.insert("generator".into(), g);
    }
    env
}
