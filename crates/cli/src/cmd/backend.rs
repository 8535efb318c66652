//! `iolab backend`: not built yet (see the open issues).

use std::process::ExitCode;

use crate::CliError;

/// Flags of `iolab backend`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `iolab backend`.
pub fn run(_args: Args) -> Result<ExitCode, CliError> {
    Err(CliError::usage("'iolab backend' is not built yet"))
}
