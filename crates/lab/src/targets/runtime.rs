//! Targets of a runtime folder: the launcher's argv built from the manifest
//! (runtimes/README.md's protocol), the checks a run must pass before its
//! runtime is started, the build run once before an experiment, and the
//! batch runners of `kind = "batch"` runtimes.

use std::process::{Command, Stdio};
use std::time::Duration;

use iolab_model::experiment::{ExperimentPlan, RunSpec, Work};
use iolab_model::{ModelKind, ModelParams};

use super::manifest::{resolve, Manifest, RuntimeKind};
use super::{StartOptions, TargetError};
use crate::services::{Addresses, Needs};

/// The runtime options a run sets: its coordinates that are `true` (the
/// preset's runtime options, e.g. `synchronized`, are its only boolean axes).
pub fn options_set(spec: &RunSpec) -> Vec<String> {
    spec.coordinates
        .iter()
        .filter(|(_, v)| **v == serde_json::Value::Bool(true))
        .map(|(k, _)| k.clone())
        .collect()
}

/// What a runtime's launcher is asked for, beyond its folder.
#[derive(Debug, Clone)]
pub struct LaunchArgs<'a> {
    /// The model.
    pub model: ModelKind,
    /// Its knobs (only those set become flags).
    pub params: &'a ModelParams,
    /// Runtime options that are on.
    pub options: &'a [String],
    /// Where its backends are.
    pub backends: &'a Addresses,
    /// Port on 127.0.0.1 (0: a free one).
    pub port: u16,
    /// Requests to send itself before its URL line.
    pub warmup: u32,
    /// Longest wait for a pooled PostgreSQL connection, when not the default.
    pub pg_wait: Option<Duration>,
    /// Ask for `/metrics` on a listener of its own (honoured when the
    /// manifest says it can).
    pub separate_metrics: bool,
}

/// The launcher's argv (runtimes/README.md's protocol), checked first.
pub fn launcher_argv(m: &Manifest, a: &LaunchArgs) -> Result<Vec<String>, TargetError> {
    m.check(a.model, a.params, a.options)?;
    let mut argv = m.launcher();
    argv.extend([
        "--model".into(),
        a.model.as_str().into(),
        "--port".into(),
        a.port.to_string(),
    ]);
    argv.extend(a.params.flags());
    for o in a.options {
        argv.push(m.options[o].flag.clone());
    }
    argv.extend(a.backends.serve_flags());
    if let Some(w) = a.pg_wait {
        argv.extend(["--pg-wait".into(), w.as_millis().max(1).to_string()]);
    }
    if a.warmup > 0 {
        argv.extend(["--warmup".into(), a.warmup.to_string()]);
    }
    if a.separate_metrics && m.separate_metrics {
        argv.extend(["--metrics-port".into(), "0".into()]);
    }
    Ok(argv)
}

/// The launcher's argv for `spec` in an experiment (checked first).
pub(super) fn argv(
    m: &Manifest,
    spec: &RunSpec,
    opts: &StartOptions,
) -> Result<Vec<String>, TargetError> {
    check(m, spec)?;
    launcher_argv(
        m,
        &LaunchArgs {
            model: spec.model,
            params: &spec.params,
            options: &options_set(spec),
            backends: &opts.backends,
            port: 0,
            warmup: m.warmup,
            pg_wait: None,
            separate_metrics: opts.separate_metrics,
        },
    )
}

/// The model, knobs and options apply, the steps' backends have clients,
/// and the runtime is of the run's kind.
pub(super) fn check(m: &Manifest, spec: &RunSpec) -> Result<(), TargetError> {
    m.check(spec.model, &spec.params, &options_set(spec))?;
    match &spec.work {
        Work::Http(w) if m.runs(RuntimeKind::Http) => {
            for kind in Needs::of_steps(&w.steps).kinds() {
                m.check_backend(kind)?;
            }
            Ok(())
        }
        Work::Batch(b) if m.runs(RuntimeKind::Batch) => m.check_backend(b.io_backend),
        Work::Http(_) => Err(TargetError::RunsBatches(m.name.clone())),
        Work::Batch(_) => Err(TargetError::ServesHttp(m.name.clone())),
    }
}

/// Build every runtime the plan's runs use, once, before the first run (the
/// build's own output goes to stderr).
pub fn prepare(plan: &ExperimentPlan) -> Result<(), TargetError> {
    let mut built: Vec<String> = Vec::new();
    for spec in &plan.runs {
        // A custom command or a foreign service is the user's: nothing to build.
        let custom =
            matches!(&spec.work, Work::Http(w) if w.command.is_some() || w.foreign.is_some());
        if spec.runtime.is_rust() || custom || built.contains(&spec.runtime.to_string()) {
            continue;
        }
        let m = Manifest::load(&spec.runtime)?;
        check(&m, spec).map_err(|why| TargetError::Run {
            run: spec.name.clone(),
            why: Box::new(why),
        })?;
        build(&m)?;
        built.push(spec.runtime.to_string());
    }
    Ok(())
}

/// Run the manifest's `build` in its folder (a no-op when there is none).
pub fn build(m: &Manifest) -> Result<(), TargetError> {
    let Some((program, args)) = m.build.split_first() else {
        return Ok(());
    };
    let argv = resolve(&m.dir, std::slice::from_ref(program));
    let status = Command::new(&argv[0])
        .args(args)
        .current_dir(&m.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .map_err(|why| TargetError::BuildStart {
            runtime: m.name.clone(),
            program: argv[0].clone(),
            why,
        })?;
    if status.success() {
        Ok(())
    } else {
        Err(TargetError::BuildFailed {
            runtime: m.name.clone(),
            command: m.build.join(" "),
            status: super::child::describe(status),
        })
    }
}

/// Longest batch document read from a batch runner (a few KiB in practice).
const MAX_DOCUMENT: u64 = 16 * 1024 * 1024;

/// Run one batch on a batch runtime: `start --spec FILE` with
/// `{"spec": ..., "executor": {"model": ..., "params": ...}}` in FILE, its
/// stdout one `iolab.batch/1` document. `cancel` sends it SIGTERM (it then
/// prints what it ran).
pub fn run_batch(
    m: &Manifest,
    spec: &RunSpec,
    batch: &iolab_model::batch::BatchSpec,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<iolab_model::batch::BatchResult, TargetError> {
    use std::io::Read;
    check(m, spec)?;
    let input = serde_json::json!({
        "spec": batch,
        "executor": batch.master.is_none().then(|| serde_json::json!({
            "model": spec.model,
            "params": spec.params,
        })),
    });
    let file = tempfile::Builder::new()
        .prefix("iolab-batch-")
        .suffix(".json")
        .tempfile()
        .map_err(TargetError::BatchSpec)?;
    std::fs::write(file.path(), input.to_string()).map_err(TargetError::BatchSpec)?;
    let mut argv = m.launcher();
    argv.extend(["--spec".into(), file.path().display().to_string()]);
    let mut child = super::child::spawn(&super::TargetCommand {
        argv,
        port: None,
        cpus: Vec::new(),
        dir: Some(m.dir.clone()),
    })?;
    let out = child.stdout.take().ok_or(TargetError::NoStdout)?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let r = out.take(MAX_DOCUMENT).read_to_string(&mut text);
        r.map(|_| text)
    });
    let status = super::child::wait_or_cancel(&mut child, cancel).map_err(TargetError::Wait)?;
    let text = reader
        .join()
        .map_err(|_| TargetError::Reader)?
        .map_err(TargetError::Output)?;
    if !status.success() {
        return Err(TargetError::BatchFailed {
            runtime: m.name.clone(),
            status: super::child::describe(status),
        });
    }
    let doc: iolab_model::batch::BatchFile =
        serde_json::from_str(&text).map_err(|why| TargetError::NoDocument {
            runtime: m.name.clone(),
            why,
        })?;
    doc.runs
        .into_iter()
        .next()
        .ok_or_else(|| TargetError::NoRun(m.name.clone()))
}
