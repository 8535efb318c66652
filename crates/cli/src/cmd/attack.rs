//! `iolab attack`: not built yet (see the open issues).

use std::process::ExitCode;

use crate::CliError;

/// Flags of `iolab attack`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `iolab attack`.
pub fn run(_args: Args) -> Result<ExitCode, CliError> {
    Err(CliError::usage("'iolab attack' is not built yet"))
}
