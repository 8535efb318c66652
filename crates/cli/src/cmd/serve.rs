//! `iolab serve`: not built yet (see the open issues).

use std::process::ExitCode;

use crate::CliError;

/// Flags of `iolab serve`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `iolab serve`.
pub fn run(_args: Args) -> Result<ExitCode, CliError> {
    Err(CliError::usage("'iolab serve' is not built yet"))
}
