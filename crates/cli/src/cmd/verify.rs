//! `iolab verify`: not built yet (see the open issues).

use std::process::ExitCode;

use crate::CliError;

/// Flags of `iolab verify`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `iolab verify`.
pub fn run(_args: Args) -> Result<ExitCode, CliError> {
    Err(CliError::usage("'iolab verify' is not built yet"))
}
