//! `iolab batch`: not built yet (see the open issues).

use std::process::ExitCode;

use crate::CliError;

/// Flags of `iolab batch`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `iolab batch`.
pub fn run(_args: Args) -> Result<ExitCode, CliError> {
    Err(CliError::usage("'iolab batch' is not built yet"))
}
