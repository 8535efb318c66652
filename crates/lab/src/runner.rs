//! The experiment runner: for each run, start the target, wait for health,
//! verify it, warm it up, measure it while sampling telemetry, stop it, let
//! its sockets drain, and write the results folder after every run.
//!
//! Failures of a run (no start, failed verify, died mid-run) are recorded as
//! its outcome and the experiment goes on; only an unusable plan or results
//! folder is an error. Cancelling (Ctrl-C) stops the current run, stops the
//! target, and writes what was measured with `complete: false`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, SystemTime};

use iolab_loadgen::{AttackError, Hooks, Progress};
use iolab_model::attack::{AttackPlan, AttackResult};
use iolab_model::batch::BatchResult;
use iolab_model::environment::Environment;
use iolab_model::experiment::{ExperimentPlan, HttpWork, RunSpec, Work};
use iolab_model::runs::{Outcome, RunRecord, RunsFile, Spread, RUNS_SCHEMA};
use iolab_model::telemetry::Telemetry;
use iolab_model::verify::VerifyReport;
use iolab_model::Driver;

use crate::process::{StartError, Target, TargetCommand};
use crate::progress::{Live, Observer, Stage};
use crate::services::{self, Addresses, Needs, ServiceError};
use crate::{drain, environment, results, telemetry};

/// How to run a plan; everything here is about this machine and this
/// invocation, nothing about the experiment itself.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The results folder (created; must not hold a `runs.json` yet).
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

/// Per-run overhead (start, verify, stop, drain) used in time estimates.
const OVERHEAD: Duration = Duration::from_millis(700);
/// Clients of the warm-up load of an open-loop run: a closed loop of a few
/// clients opens connections and starts threads, but can never leave a
/// backlog behind (a slow model at a high rate would carry one into the
/// measured run).
const WARMUP_CLIENTS: u32 = 4;

/// About how long one run (all its repetitions) takes.
pub fn estimate_run(plan: &ExperimentPlan, r: &RunSpec) -> Duration {
    let once = match &r.work {
        Work::Http(w) => {
            let d = w.driver.duration().unwrap_or(Duration::from_secs(10));
            plan.warmup + d + OVERHEAD + w.timeout.min(d) / 2
        }
        Work::Batch(_) => Duration::from_secs(5),
    };
    once * plan.reps.max(1)
}

/// About how long a plan takes to run.
pub fn estimate(plan: &ExperimentPlan) -> Duration {
    plan.runs.iter().map(|r| estimate_run(plan, r)).sum()
}

/// Run a whole experiment, writing `runs.json` and `environment.json` into
/// `opts.out_dir` after every run.
pub fn run(
    plan: &ExperimentPlan,
    opts: &RunOptions,
    observer: &dyn Observer,
) -> Result<RunsFile, LabError> {
    preflight(plan, opts)?;
    // JVM targets: build the jar once, before the first run (crate::jvm).
    crate::jvm::prepare(plan).map_err(LabError::Invalid)?;
    let exe = match &opts.exe {
        Some(p) => p.clone(),
        None => std::env::current_exe()
            .map_err(|e| LabError::Invalid(format!("cannot find the iolab binary: {e}")))?,
    };
    let mut env = environment::collect(&opts.command_line);
    let (target_cpus, gen_cpus) = environment::pinning(opts.pin);
    if !target_cpus.is_empty() {
        env.pinning.insert("target".into(), target_cpus.clone());
        env.pinning.insert("generator".into(), gen_cpus.clone());
    }
    let ephemeral = (env.port_range.1.saturating_sub(env.port_range.0)) as usize;
    let cores = env.cores;
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
    env.services = backends.info().to_vec();
    let mut file = RunsFile {
        schema: RUNS_SCHEMA.to_string(),
        plan: plan.clone(),
        runs: Vec::new(),
        complete: false,
        started_utc: results::rfc3339(SystemTime::now()),
        finished_utc: None,
        environment: env,
    };
    save(&opts.out_dir, &file)?;
    observer.experiment_started(plan, plan.runs.len(), estimate(plan));

    let ctx = Ctx {
        plan,
        opts,
        observer,
        exe,
        target_cpus,
        gen_cpus,
        ephemeral,
        verified: Mutex::new(HashMap::new()),
        backends: &backends.addresses,
    };
    let total = plan.runs.len();
    for (index, spec) in plan.runs.iter().enumerate() {
        if opts.cancelled() {
            break;
        }
        let mut record = match &spec.work {
            Work::Http(w) => ctx.http_run(index, spec, w),
            Work::Batch(b) => ctx.batch_run(index, spec, b),
        };
        record.prediction = iolab_predict::predict_run(spec, cores);
        file.runs.push(record);
        save(&opts.out_dir, &file)?;
        observer.run_finished(index, total, file.runs.last().expect("just pushed"));
    }
    file.complete = !opts.cancelled()
        && file.runs.len() == total
        && file.runs.iter().all(|r| r.outcome != Outcome::Interrupted);
    file.finished_utc = Some(results::rfc3339(SystemTime::now()));
    save(&opts.out_dir, &file)?;
    backends.stop();
    observer.experiment_finished(&file);
    Ok(file)
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
            let probe = attack_plan("http://127.0.0.1:1", w, w.driver.clone(), &[]);
            iolab_loadgen::validate(&probe).map_err(|e| {
                LabError::Invalid(format!("run '{}': {}", spec.name, attack_error(&e)))
            })?;
        }
    }
    let runs_json = opts.out_dir.join(results::RUNS_JSON);
    if runs_json.exists() {
        return Err(LabError::Invalid(format!(
            "{} already exists: choose another --out folder or remove it",
            runs_json.display()
        )));
    }
    std::fs::create_dir_all(&opts.out_dir).map_err(|source| LabError::Io {
        path: opts.out_dir.clone(),
        source,
    })
}

fn attack_error(e: &AttackError) -> String {
    e.to_string()
}

/// The load plan of one HTTP run against `base` (a target's base URL).
fn attack_plan(base: &str, w: &HttpWork, driver: Driver, cpus: &[usize]) -> AttackPlan {
    AttackPlan {
        target: format!("{base}/work?steps={}{}", w.steps, w.body.query_suffix()),
        driver,
        connections: w.connections,
        timeout: w.timeout,
        interval: w.interval,
        threads: (!cpus.is_empty()).then_some(cpus.len()),
        cpus: cpus.to_vec(),
        record_requests: false,
        // A pinned generator owns its core: spin so sends leave on time.
        spin: !cpus.is_empty(),
    }
}

/// The warm-up load: a few clients in a closed loop for the warm-up time
/// (a closed-loop run keeps its own clients).
fn warmup_driver(d: &Driver, warmup: Duration) -> Option<Driver> {
    if warmup.is_zero() {
        return None;
    }
    let concurrency = match d {
        Driver::Open { .. } => WARMUP_CLIENTS,
        Driver::Closed { concurrency, .. } => *concurrency,
    };
    Some(Driver::Closed {
        concurrency,
        requests: None,
        duration: Some(warmup),
    })
}

struct Ctx<'a> {
    plan: &'a ExperimentPlan,
    opts: &'a RunOptions,
    observer: &'a dyn Observer,
    exe: PathBuf,
    target_cpus: Vec<usize>,
    gen_cpus: Vec<usize>,
    ephemeral: usize,
    /// Verify reports by target identity, so each target is verified once.
    verified: Mutex<HashMap<String, VerifyReport>>,
    /// The real backends of this experiment (only those its steps call).
    backends: &'a Addresses,
}

/// What one repetition of an HTTP run produced.
struct Rep {
    outcome: Outcome,
    attack: Option<AttackResult>,
    telemetry: Telemetry,
    verify: Option<VerifyReport>,
    backend_counts: Option<iolab_model::runs::BackendCounts>,
}

impl Ctx<'_> {
    fn record(&self, spec: &RunSpec, outcome: Outcome) -> RunRecord {
        RunRecord {
            name: spec.name.clone(),
            model: spec.model,
            coordinates: spec.coordinates.clone(),
            outcome,
            spec: spec.clone(),
            attack: None,
            reps: Vec::new(),
            spread: None,
            batch: None,
            telemetry: Telemetry::default(),
            verify: None,
            prediction: None,
            backend_counts: None,
        }
    }

    fn http_run(&self, index: usize, spec: &RunSpec, w: &HttpWork) -> RunRecord {
        let mut reps: Vec<Rep> = Vec::new();
        for rep in 0..self.plan.reps.max(1) {
            if self.opts.cancelled() {
                break;
            }
            self.observer
                .run_started(index, self.plan.runs.len(), spec, rep);
            let r = self.http_rep(spec, w);
            let stop = !r.outcome.is_completed();
            reps.push(r);
            if stop {
                break;
            }
        }
        let mut record = self.record(spec, Outcome::Interrupted);
        if reps.is_empty() {
            return record;
        }
        // The run's outcome is the first failure, if any.
        record.outcome = reps
            .iter()
            .map(|r| r.outcome.clone())
            .find(|o| !o.is_completed())
            .unwrap_or(Outcome::Completed);
        record.verify = reps.iter().find_map(|r| r.verify.clone());
        let measured: Vec<usize> = (0..reps.len())
            .filter(|&i| reps[i].attack.is_some())
            .collect();
        if measured.is_empty() {
            record.telemetry = std::mem::take(&mut reps[0].telemetry);
            return record;
        }
        let goodput = |i: usize| {
            reps[i]
                .attack
                .as_ref()
                .map_or(0.0, |a| a.throughput_rps.goodput)
        };
        let mut order = measured.clone();
        order.sort_by(|a, b| goodput(*a).total_cmp(&goodput(*b)));
        let median = order[(order.len() - 1) / 2];
        if measured.len() > 1 {
            let attacks: Vec<&AttackResult> = measured
                .iter()
                .filter_map(|&i| reps[i].attack.as_ref())
                .collect();
            record.spread = Some(spread(&attacks));
            record.reps = attacks.into_iter().cloned().collect();
        }
        record.attack = reps[median].attack.take();
        record.backend_counts = reps[median].backend_counts.take();
        record.telemetry = std::mem::take(&mut reps[median].telemetry);
        record
    }

    fn target_command(&self, spec: &RunSpec, w: &HttpWork) -> Result<TargetCommand, StartError> {
        let cpus = self.target_cpus.clone();
        match &w.command {
            Some(argv) => {
                let needs_port = argv.iter().any(|a| a.contains("{port}"));
                let port = if needs_port {
                    Some(
                        crate::process::free_port()
                            .map_err(|e| StartError(format!("no free port for {{port}}: {e}")))?,
                    )
                } else {
                    None
                };
                let argv = argv
                    .iter()
                    .map(|a| substitute(a, spec, port, self.backends))
                    .collect();
                Ok(TargetCommand { argv, port, cpus })
            }
            None if spec.runtime == iolab_model::Runtime::Jvm => Ok(TargetCommand {
                argv: crate::jvm::run_command(spec, self.backends).map_err(StartError)?,
                port: None,
                cpus,
            }),
            None => {
                let mut argv = vec![
                    self.exe.display().to_string(),
                    "serve".into(),
                    "--model".into(),
                    spec.model.as_str().into(),
                    "--port".into(),
                    "0".into(),
                    // The runner does not wait for abandoned work at the end.
                    "--grace".into(),
                    "250ms".into(),
                ];
                argv.extend(spec.params.flags());
                argv.extend(self.backends.serve_flags());
                Ok(TargetCommand {
                    argv,
                    port: None,
                    cpus,
                })
            }
        }
    }

    fn http_rep(&self, spec: &RunSpec, w: &HttpWork) -> Rep {
        let mut rep = Rep {
            outcome: Outcome::Completed,
            attack: None,
            telemetry: Telemetry::default(),
            verify: None,
            backend_counts: None,
        };
        self.observer.stage(spec, Stage::Starting);
        let start_timeout = match spec.runtime {
            iolab_model::Runtime::Jvm => self.opts.start_timeout.max(crate::jvm::START_TIMEOUT),
            iolab_model::Runtime::Rust => self.opts.start_timeout,
        };
        let started = self
            .target_command(spec, w)
            .and_then(|cmd| Target::start(&cmd, start_timeout, &self.opts.cancel));
        let mut target = match started {
            Ok(t) => t,
            Err(e) => {
                rep.outcome = if self.opts.cancelled() {
                    Outcome::Interrupted
                } else {
                    Outcome::StartFailed { detail: e.0 }
                };
                return rep;
            }
        };

        // The contract gate, once per distinct target.
        if self.opts.verify {
            self.observer.stage(spec, Stage::Verifying);
            let report = self.verify(spec, w, &target.url);
            match report {
                Ok(r) if r.passed() => rep.verify = Some(r),
                Ok(r) => {
                    let failed: Vec<String> = r
                        .checks
                        .iter()
                        .filter(|c| !c.passed)
                        .map(|c| format!("{} ({})", c.name, c.detail))
                        .collect();
                    let detail = if failed.is_empty() {
                        "no checks ran".to_string()
                    } else {
                        failed.join("; ")
                    };
                    rep.verify = Some(r);
                    rep.outcome = Outcome::VerifyFailed { detail };
                }
                Err(e) => {
                    rep.outcome = Outcome::VerifyFailed { detail: e };
                }
            }
            if !rep.outcome.is_completed() {
                if let Some(d) = target.exit_detail() {
                    rep.outcome = Outcome::TargetDied { detail: d };
                }
                self.stop(spec, &mut target);
                return rep;
            }
        }

        let sampler =
            telemetry::Sampler::start(target.pid(), Some(format!("{}/metrics", target.url)));

        // Warm-up: not recorded.
        if let Some(driver) = warmup_driver(&w.driver, self.plan.warmup) {
            if !self.opts.cancelled() {
                self.observer.stage(spec, Stage::WarmingUp);
                let plan = attack_plan(&target.url, w, driver, &self.gen_cpus);
                let _ = self.attack(spec, Stage::WarmingUp, &plan);
                self.settle(&target, w.timeout);
            }
        }

        // The measured run.
        let mut zero = telemetry::unix_ms();
        if !self.opts.cancelled() && target.exit_detail().is_none() {
            self.observer.stage(spec, Stage::Measuring);
            let plan = attack_plan(&target.url, w, w.driver.clone(), &self.gen_cpus);
            let counted = self.backends.only(&Needs::of_steps(&w.steps));
            let before = self.backend_counts(&counted);
            zero = telemetry::unix_ms();
            let measured = self.attack(spec, Stage::Measuring, &plan);
            rep.backend_counts = before.map(|b| self.backend_counts_since(&counted, b));
            match measured {
                Ok((result, cancelled)) => {
                    if result.started_unix_ms > 0 {
                        zero = result.started_unix_ms as f64;
                    }
                    if cancelled {
                        rep.outcome = Outcome::Interrupted;
                    }
                    rep.attack = Some(result);
                }
                Err(e) => {
                    rep.outcome = Outcome::Skipped {
                        detail: format!("load generator refused the plan: {e}"),
                    };
                }
            }
        } else if self.opts.cancelled() {
            rep.outcome = Outcome::Interrupted;
        }
        rep.telemetry = sampler.finish(zero);
        if let Some(d) = target.exit_detail() {
            rep.outcome = Outcome::TargetDied { detail: d };
        }
        self.stop(spec, &mut target);
        rep
    }

    /// Counters of the backends in `counted`; `None` when it names none.
    fn backend_counts(
        &self,
        counted: &Addresses,
    ) -> Option<Result<iolab_backends::BackendCounts, String>> {
        if counted == &Addresses::default() {
            return None;
        }
        Some(iolab_backends::counts::read(&counted.config()))
    }

    /// What the backends counted since `before` (read a moment after the
    /// load, as a backend may book a call just after its answer left).
    fn backend_counts_since(
        &self,
        counted: &Addresses,
        before: Result<iolab_backends::BackendCounts, String>,
    ) -> iolab_model::runs::BackendCounts {
        thread::sleep(Duration::from_millis(200));
        let after = iolab_backends::counts::read(&counted.config());
        match (before, after) {
            (Ok(b), Ok(a)) => a.since(&b),
            (Err(e), _) | (_, Err(e)) => iolab_model::runs::BackendCounts {
                error: Some(e),
                ..Default::default()
            },
        }
    }

    /// Verify, or reuse the report of an identical target. With real
    /// backends in the steps, the gate also checks the target really calls
    /// them (`iolab_verify::verify_backends`).
    fn verify(&self, spec: &RunSpec, w: &HttpWork, url: &str) -> Result<VerifyReport, String> {
        let counted = self.backends.only(&Needs::of_steps(&w.steps));
        let key = format!(
            "{}|{:?}|{:?}|{:?}|{:?}",
            spec.model, spec.runtime, spec.params, w.command, counted
        );
        if let Some(r) = self.verified.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(r);
        }
        let opts = iolab_verify::VerifyOptions {
            model: Some(spec.model.as_str().to_string()),
            timeout: Duration::from_secs(10),
        };
        let mut r =
            iolab_verify::verify(url, &opts).map_err(|e| format!("cannot verify {url}: {e}"))?;
        if counted != Addresses::default() {
            let checks = iolab_verify::verify_backends(url, &counted.config(), &opts)
                .map_err(|e| format!("cannot verify {url}: {e}"))?;
            r.checks.extend(checks);
        }
        if r.passed() {
            if let Ok(mut m) = self.verified.lock() {
                m.insert(key, r.clone());
            }
        }
        Ok(r)
    }

    /// One attack with live progress forwarded to the observer.
    fn attack(
        &self,
        spec: &RunSpec,
        stage: Stage,
        plan: &AttackPlan,
    ) -> Result<(AttackResult, bool), AttackError> {
        let slot: Arc<Mutex<Option<Live>>> = Arc::new(Mutex::new(None));
        let writer = Arc::clone(&slot);
        let hooks = Hooks {
            cancel: Some(Arc::clone(&self.opts.cancel)),
            progress: Some(Arc::new(move |p: &Progress| {
                if let Ok(mut s) = writer.lock() {
                    *s = Some(Live {
                        elapsed: p.elapsed,
                        sent: p.sent,
                        ok: p.ok,
                        errors: p.errors,
                        rps: p.rps,
                        p99_ms: p.p99_ms,
                    });
                }
            })),
        };
        let done = AtomicBool::new(false);
        thread::scope(|s| {
            s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    thread::sleep(Duration::from_millis(100));
                    let live = slot.lock().ok().and_then(|mut l| l.take());
                    if let Some(l) = live {
                        self.observer.live(spec, stage, &l);
                    }
                }
            });
            let out = iolab_loadgen::attack(plan, &hooks);
            done.store(true, Ordering::Relaxed);
            out.map(|r| (r.result, r.cancelled))
        })
    }

    /// After warm-up, wait until the target has no request in flight or
    /// queued (read from `/metrics`), at most the timeout (capped at 1 s)
    /// plus half a second.
    fn settle(&self, target: &Target, timeout: Duration) {
        let url = format!("{}/metrics", target.url);
        let deadline = std::time::Instant::now()
            + timeout.min(Duration::from_secs(1))
            + Duration::from_millis(500);
        while std::time::Instant::now() < deadline && !self.opts.cancelled() {
            match crate::http::get(&url, Duration::from_millis(200)) {
                Ok(r) if r.status == 200 => {
                    let m = telemetry::parse_metrics(&r.body);
                    match (m.in_flight, m.queued) {
                        (Some(f), q) if f <= 1.0 && q.unwrap_or(0.0) == 0.0 => return,
                        (None, _) => return,
                        _ => {}
                    }
                }
                // A busy target that cannot answer is still draining.
                Ok(_) | Err(_) => {}
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn stop(&self, spec: &RunSpec, target: &mut Target) {
        self.observer.stage(spec, Stage::Stopping);
        let port = target.port;
        target.stop(self.opts.grace);
        drain::wait(port, self.ephemeral, self.opts.drain_max);
    }

    fn batch_run(
        &self,
        index: usize,
        spec: &RunSpec,
        b: &iolab_model::batch::BatchSpec,
    ) -> RunRecord {
        // IO tasks on a real backend use the experiment's services, through
        // a pool of `pg_pool` connections (the target knob) like a target's.
        let io = if b.io_backend.is_sleep() {
            Ok(iolab_batch::io::Io::sleep())
        } else {
            let mut config = self.backends.config();
            config.pg_pool = spec.params.pg_pool.unwrap_or(config.pg_pool);
            iolab_batch::io::Io::new(
                b.io_backend,
                Arc::new(iolab_backends::Backends::new(config)),
            )
        };
        let io = match io {
            Ok(io) => io,
            Err(e) => return self.record(spec, Outcome::Skipped { detail: e }),
        };
        let mut results: Vec<BatchResult> = Vec::new();
        for rep in 0..self.plan.reps.max(1) {
            if self.opts.cancelled() {
                break;
            }
            self.observer
                .run_started(index, self.plan.runs.len(), spec, rep);
            self.observer.stage(spec, Stage::Batch);
            results.push(iolab_batch::run_with_io(
                b,
                spec.model,
                &spec.params,
                &io,
                &self.opts.cancel,
            ));
        }
        let mut record = self.record(spec, Outcome::Completed);
        if self.opts.cancelled() {
            record.outcome = Outcome::Interrupted;
        }
        results.sort_by(|a, b| a.total_s.total_cmp(&b.total_s));
        if let Some(m) = results.get(results.len().saturating_sub(1) / 2).cloned() {
            if m.tasks == 0 {
                if let Some(f) = &m.failure {
                    record.outcome = Outcome::Skipped { detail: f.clone() };
                }
            }
            record.batch = Some(m);
        }
        record
    }
}

/// `{port}`, `{model}`, set knobs (`{threads}`, `{workers}`, ...) and the
/// backends' addresses (`{pg}`, `{mc}`, `{http_backend}`) in a custom
/// command's arguments.
fn substitute(arg: &str, spec: &RunSpec, port: Option<u16>, backends: &Addresses) -> String {
    let mut a = arg.replace("{model}", spec.model.as_str());
    for (k, v) in [
        ("{pg}", &backends.pg),
        ("{mc}", &backends.mc),
        ("{http_backend}", &backends.http),
    ] {
        if let Some(v) = v {
            a = a.replace(k, v);
        }
    }
    if let Some(p) = port {
        a = a.replace("{port}", &p.to_string());
    }
    let p = &spec.params;
    for (k, v) in [
        ("{threads}", p.threads),
        ("{max_connections}", p.max_connections),
        ("{backlog}", p.backlog),
        ("{workers}", p.workers),
        ("{offload}", p.offload),
        ("{max_threads}", p.max_threads),
        ("{mc_pool}", p.mc_pool),
        ("{pg_pool}", p.pg_pool),
    ] {
        if let Some(v) = v {
            a = a.replace(k, &v.to_string());
        }
    }
    a
}

/// Min and max of the key figures over repetitions.
fn spread(attacks: &[&AttackResult]) -> Spread {
    let range = |f: &dyn Fn(&AttackResult) -> f64| {
        attacks
            .iter()
            .map(|a| f(a))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    Spread {
        reps: attacks.len() as u32,
        goodput_rps: range(&|a| a.throughput_rps.goodput),
        p50_ms: range(&|a| a.latency_ms.p50),
        p99_ms: range(&|a| a.latency_ms.p99),
    }
}

/// The environment this runner records (for callers that need it alone).
pub fn environment(command_line: &str, pin: bool) -> Environment {
    let mut env = environment::collect(command_line);
    let (t, g) = environment::pinning(pin);
    if !t.is_empty() {
        env.pinning.insert("target".into(), t);
        env.pinning.insert("generator".into(), g);
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn warmup_is_a_few_clients_that_leave_no_backlog() {
        let d = Driver::constant(800.0, Duration::from_secs(5));
        let w = warmup_driver(&d, Duration::from_secs(1)).unwrap();
        assert_eq!(
            w,
            Driver::Closed {
                concurrency: WARMUP_CLIENTS,
                requests: None,
                duration: Some(Duration::from_secs(1))
            }
        );
        assert!(warmup_driver(&d, Duration::ZERO).is_none());
        let c = Driver::Closed {
            concurrency: 10,
            requests: Some(100),
            duration: None,
        };
        let w = warmup_driver(&c, Duration::from_millis(300)).unwrap();
        assert_eq!(
            w,
            Driver::Closed {
                concurrency: 10,
                requests: None,
                duration: Some(Duration::from_millis(300))
            }
        );
    }

    #[test]
    fn spread_is_min_and_max() {
        let mut a = AttackResult::default();
        a.throughput_rps.goodput = 10.0;
        a.latency_ms.p99 = 5.0;
        let mut b = a.clone();
        b.throughput_rps.goodput = 20.0;
        b.latency_ms.p99 = 3.0;
        let s = spread(&[&a, &b]);
        assert_eq!(s.reps, 2);
        assert_eq!(s.goodput_rps, (10.0, 20.0));
        assert_eq!(s.p99_ms, (3.0, 5.0));
    }

    #[test]
    fn estimates_the_showdown_under_two_minutes() {
        let p = crate::preset::load_plan("showdown", None).unwrap();
        let e = estimate(&p);
        assert!(
            e > Duration::from_secs(30) && e < Duration::from_secs(120),
            "{e:?}"
        );
    }
}
