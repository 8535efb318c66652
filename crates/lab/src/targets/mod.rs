//! Targets: what `iolab run` measures and `iolab serve` starts, as one
//! abstraction with a file per kind:
//! - built in: a Rust model served by this binary ([`builtin`]);
//! - a runtime folder, `runtimes/<name>` ([`runtime`]), read through its
//!   [`manifest`]: the JVM today, any runtime with a manifest tomorrow;
//! - a user's own program ([`custom`]): a command with placeholders;
//! - a user's own service ([`foreign`]): a URL or a command, measured with
//!   a request of their own instead of the target contract.
//!
//! [`process`] starts, watches and stops any of them ([`child`] is the
//! process under it); [`foreground`] runs a runtime's target in the
//! foreground for `iolab serve --runtime`.

mod builtin;
pub mod child;
mod custom;
pub mod embedded;
mod error;
pub mod expr;
pub mod foreground;
pub mod foreign;
pub mod manifest;
pub mod process;
pub mod runtime;
mod tree;

use std::path::Path;
use std::time::Duration;

use iolab_model::concurrency::Host;
use iolab_model::experiment::{RunSpec, Work};
use iolab_model::runtime::RuntimeKnobs;
use iolab_model::ModelParams;

use crate::services::Addresses;

pub use child::{StartError, TargetCommand};
pub use error::{EmbedError, TargetError};
pub use manifest::{Manifest, RuntimeKind};
pub use process::{Health, Target};

/// How a run's target is started, decided once per run ([`Launch::of`]):
/// the runner starts it, checks it and takes its runtime's defaults from it.
#[derive(Debug, Clone)]
pub enum Launch {
    /// `iolab serve` of the iolab binary the start is given.
    BuiltIn,
    /// A runtime folder's launcher.
    Runtime(Box<Manifest>),
    /// A user's own command.
    Custom(Vec<String>),
}

/// What a start needs beyond the run itself.
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// The experiment's backends.
    pub backends: Addresses,
    /// CPUs to pin the target to.
    pub cpus: Vec<usize>,
    /// Ask the target for a `/metrics` listener of its own.
    pub separate_metrics: bool,
}

impl Launch {
    /// How `spec`'s target starts: its command if it has one, else its
    /// runtime (its manifest read here, once).
    pub fn of(spec: &RunSpec) -> Result<Launch, TargetError> {
        if let Work::Http(w) = &spec.work {
            if let Some(argv) = &w.command {
                return Ok(Launch::Custom(argv.clone()));
            }
        }
        if spec.runtime.is_rust() {
            return Ok(Launch::BuiltIn);
        }
        Manifest::load(&spec.runtime).map(|m| Launch::Runtime(Box::new(m)))
    }

    /// The command that starts `spec`'s target (`exe`: the iolab binary
    /// that serves the built-in models).
    pub fn command(
        &self,
        spec: &RunSpec,
        opts: &StartOptions,
        exe: &Path,
    ) -> Result<TargetCommand, TargetError> {
        let (argv, port, dir) = match self {
            Launch::BuiltIn => (builtin::argv(exe, spec, opts), None, None),
            Launch::Runtime(m) => (runtime::argv(m, spec, opts)?, None, Some(m.dir.clone())),
            Launch::Custom(argv) => {
                let (argv, port) = custom::argv(argv, spec, &opts.backends)?;
                (argv, port, None)
            }
        };
        Ok(TargetCommand {
            argv,
            port,
            cpus: opts.cpus.clone(),
            dir,
        })
    }

    /// Longest wait for the target to start: at least `floor`.
    pub fn start_timeout(&self, floor: Duration) -> Duration {
        match self {
            Launch::Runtime(m) => m.start_timeout().max(floor),
            _ => floor,
        }
    }

    /// Does the target serve `/metrics` on a listener of its own?
    pub fn separate_metrics(&self) -> bool {
        match self {
            Launch::Runtime(m) => m.separate_metrics,
            Launch::BuiltIn => true,
            Launch::Custom(_) => false,
        }
    }
}

/// Check what can be checked of `spec`'s target before anything starts: the
/// model, knobs and options its runtime serves and the backends its steps
/// call. A custom command is the user's own and is not checked; a foreign
/// target's model is what the user believes it to be (only its knobs are).
pub fn check(spec: &RunSpec) -> Result<(), TargetError> {
    if let Work::Http(w) = &spec.work {
        if w.foreign.is_some() {
            return spec.params.check().map_err(TargetError::from);
        }
    }
    match Launch::of(spec)? {
        Launch::BuiltIn => builtin::check(spec),
        Launch::Runtime(m) => runtime::check(&m, spec),
        Launch::Custom(_) => Ok(()),
    }
}

/// Where a run's knob defaults, their names and its host come from: the
/// manifest of the spec's runtime, else the built-in knob table. A foreign
/// target or a custom command that names a runtime (`runtime = "python"`: a
/// gunicorn service of the user's own) takes that runtime's defaults.
#[derive(Debug, Clone)]
pub enum Defaults {
    /// The knob table (`crates/model/src/knob.rs`): the built-in runtime's.
    BuiltIn,
    /// A runtime folder's manifest.
    Runtime(Box<Manifest>),
}

impl Defaults {
    /// The defaults of `spec`'s runtime (the knob table when its manifest
    /// cannot be read: the start reports that fault).
    pub fn of(spec: &RunSpec) -> Defaults {
        if spec.runtime.is_rust() {
            return Defaults::BuiltIn;
        }
        Manifest::load(&spec.runtime).map_or(Defaults::BuiltIn, |m| Defaults::Runtime(Box::new(m)))
    }

    /// The defaults of `spec` started by `launch`: its manifest when it has
    /// one (not read again), else as [`Defaults::of`] (a custom command may
    /// name a runtime for its defaults).
    pub fn of_launch(spec: &RunSpec, launch: &Launch) -> Defaults {
        match launch {
            Launch::Runtime(m) => Defaults::Runtime(m.clone()),
            Launch::BuiltIn => Defaults::BuiltIn,
            Launch::Custom(_) => Defaults::of(spec),
        }
    }

    /// What `spec` will do as its target runs it on `cores` cores.
    pub fn predict(&self, spec: &RunSpec, cores: u32) -> Option<iolab_model::predict::Prediction> {
        let knobs = self.knobs(spec, cores);
        iolab_predict::predict_run_with(&self.effective_spec(spec, cores), self.host(cores), &knobs)
    }

    /// The host its model runs on (a runtime may add an interpreter lock).
    pub fn host(&self, cores: u32) -> Host {
        match self {
            Defaults::Runtime(m) => m.host(cores),
            Defaults::BuiltIn => Host::cores(cores),
        }
    }

    /// `spec`'s knobs with the runtime's own defaults on `cores` cores filled in.
    pub fn effective(&self, spec: &RunSpec, cores: u32) -> ModelParams {
        match self {
            Defaults::Runtime(m) => m.effective(spec.model, &spec.params, cores),
            Defaults::BuiltIn => spec.params.clone(),
        }
    }

    /// `spec`'s knobs as its runtime names and defaults them.
    pub fn knobs(&self, spec: &RunSpec, cores: u32) -> RuntimeKnobs {
        match self {
            Defaults::Runtime(m) => m.knobs(spec.model, &spec.params, cores),
            Defaults::BuiltIn => RuntimeKnobs::built_in(spec.model, &spec.params, cores),
        }
    }

    /// `spec` as its target runs it on `cores` cores: knobs defaulted.
    fn effective_spec(&self, spec: &RunSpec, cores: u32) -> RunSpec {
        let mut effective = spec.clone();
        effective.params = self.effective(spec, cores);
        effective
    }
}

/// Predict every run of a plan as its target would run it: the runtime's
/// own defaults filled in and its host (an interpreter lock counts).
pub fn predict_plan(
    plan: &iolab_model::experiment::ExperimentPlan,
    cores: u32,
) -> Vec<iolab_model::predict::Prediction> {
    plan.runs
        .iter()
        .filter_map(|spec| predict_run(spec, cores))
        .collect()
}

/// The predicted timeline of a run's span sample, as its target would run it.
pub fn predict_spans(spec: &RunSpec, cores: u32) -> Option<iolab_model::spans::Timeline> {
    let d = Defaults::of(spec);
    iolab_predict::predict_spans(&d.effective_spec(spec, cores), d.host(cores))
}

/// Predict one run as its target would run it (see [`predict_plan`]).
pub fn predict_run(spec: &RunSpec, cores: u32) -> Option<iolab_model::predict::Prediction> {
    Defaults::of(spec).predict(spec, cores)
}
