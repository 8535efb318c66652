//! `iolab presets`: not built yet (see the open issues).

use std::process::ExitCode;

use crate::CliError;

/// Flags of `iolab presets`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Run `iolab presets`.
pub fn run(_args: Args) -> Result<ExitCode, CliError> {
    Err(CliError::usage("'iolab presets' is not built yet"))
}
