//! `iolab predict`: not built yet (see the open issues).

use std::process::ExitCode;

use crate::CliError;

/// Flags of `iolab predict`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `iolab predict`.
pub fn run(_args: Args) -> Result<ExitCode, CliError> {
    Err(CliError::usage("'iolab predict' is not built yet"))
}
