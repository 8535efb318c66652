//! Exit codes: 0 success, 1 a run or check failed, 2 bad input (flags, presets,
//! workload strings, a target or backend that cannot be used), 3 a capacity
//! measured on a machine too noisy for the precision asked (`--strict`),
//! 130 interrupted.

use std::process::ExitCode;

/// `capacity --strict`: the machine moved more than the precision asked
/// allows (the answer is written, and says so).
pub const EXIT_NOISY: u8 = 3;

/// What a subcommand can fail with.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad input: a one-line message naming the fault and the fix; exit 2.
    #[error("{0}")]
    Usage(String),
    /// The work ran but failed (e.g. verify found a broken contract); exit 1.
    #[error("{0:#}")]
    Failed(anyhow::Error),
}

impl CliError {
    /// Build a usage error from anything printable.
    pub fn usage(msg: impl std::fmt::Display) -> Self {
        CliError::Usage(msg.to_string())
    }
}

impl From<anyhow::Error> for CliError {
    fn from(e: anyhow::Error) -> Self {
        CliError::Failed(e)
    }
}

/// Print the error (one line, `error: ...`) and pick the exit code.
pub fn finish(result: Result<ExitCode, CliError>) -> ExitCode {
    // Output that never reached stdout is a failed command whatever the
    // work said (`attack ... > /dev/full`), but bad input stays exit 2.
    let result = match (result, iolab_files::stdout::finish()) {
        (Ok(_), Err(msg)) => Err(CliError::Failed(anyhow::anyhow!(msg))),
        (result, _) => result,
    };
    match result {
        Ok(code) => code,
        Err(CliError::Usage(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
        Err(CliError::Failed(e)) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
