//! `iolab report`: not built yet (see the open issues).

use std::process::ExitCode;

use crate::CliError;

/// Flags of `iolab report`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `iolab report`.
pub fn run(_args: Args) -> Result<ExitCode, CliError> {
    Err(CliError::usage("'iolab report' is not built yet"))
}
