//! Experiments: what `iolab run` does.
//!
//! - [`preset`]: preset files (TOML) -> a validated, sweep-expanded, time-scaled
//!   [`ExperimentPlan`](iolab_model::experiment::ExperimentPlan).
//! - [`runner`]: runs a plan — its [`targets`], the verify gate, warm-up,
//!   load, telemetry (`iolab_telemetry`), socket [`drain`] — into a results folder
//!   ([`results`]) with the machine's [`environment`].
//! - [`progress`]: observer hooks (what shows them lives with its user).
//! - [`interrupt`]: Ctrl-C turns into a cancel flag.
//! - [`targets`]: what is measured: a built-in model, a runtime folder
//!   (`runtimes/<name>`, read through its manifest) or a user's own command.
//! - [`machine`], [`environment`], [`drain`]: the machine's own readings
//!   (what it will start, what a run happened on, its sockets draining),
//!   which live in `iolab_telemetry` and are used here by these names.
//! - [`merge`]: the results folders of a sharded experiment, run by run.
//! - [`services`]: the real backends (`pg`, `mc`, `http`) an experiment's
//!   steps need, reused from `IOLAB_*` or started for it and stopped after.

pub mod estimate;
pub mod http;
pub mod interrupt;
pub mod merge;
pub mod preset;
pub mod progress;
pub mod results;
pub mod runner;
pub mod services;
pub mod targets;

pub use iolab_telemetry::{drain, environment, machine};
pub use preset::{load_plan, PresetError};
pub use progress::{Observer, Silent, Stage};
pub use runner::{run, run_keeping, LabError, Ran, RunOptions};
