//! One module per subcommand: flags (`Args`), their translation into a typed
//! plan, and a call into the library crate that does the work.

pub mod attack;
pub mod backend;
pub mod batch;
pub mod capacity;
pub mod flags;
pub mod k8s;
pub mod live;
pub mod merge;
pub mod predict;
pub mod presets;
pub mod report;
pub mod run;
pub mod serve;
pub mod shard;
pub mod verify;
pub mod whatif;

use std::process::ExitCode;

use crate::cli::Command;
use crate::CliError;

/// Run one subcommand.
pub fn dispatch(command: Command) -> Result<ExitCode, CliError> {
    match command {
        Command::Run(a) => run::run(a),
        Command::Presets(a) => presets::run(a),
        Command::Attack(a) => attack::run(a),
        Command::Capacity(a) => capacity::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Report(a) => report::run(a),
        Command::Batch(a) => batch::run(a),
        Command::Predict(a) => predict::run(a),
        Command::Backend(a) => backend::run(a),
        Command::Merge(a) => merge::run(a),
        Command::K8s(a) => k8s::run(a),
        Command::Whatif(a) => whatif::run(a),
    }
}
