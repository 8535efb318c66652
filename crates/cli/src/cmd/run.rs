//! `iolab run`: not built yet (see the open issues).

use std::process::ExitCode;

use crate::CliError;

/// Flags of `iolab run`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `iolab run`.
pub fn run(_args: Args) -> Result<ExitCode, CliError> {
    Err(CliError::usage("'iolab run' is not built yet"))
}
