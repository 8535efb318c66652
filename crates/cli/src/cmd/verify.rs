//! `iolab verify URL`: check that a target honours the contract before
//! measuring it. One line per check; exit 0 only if all pass, 1 if any
//! fails, 2 for a bad URL or nothing listening.
//!
//! With backend addresses (`--pg`, `--mc`, `--http-backend` or the
//! `IOLAB_*` env, as `iolab serve` reads them) it also checks the target
//! really calls each backend: N one-step requests must move the backend's
//! own counter (see `iolab_verify::backends` for how shared backends are
//! judged). With `--held`, `/ws` and `/events` too (`iolab_verify::held`).

use std::process::ExitCode;

use iolab_lab::interrupt::{cancel_on_signals, EXIT_INTERRUPTED};
use iolab_model::parse_duration;
use iolab_model::verify::VerifyFile;
use iolab_report::Format;
use iolab_verify::VerifyOptions;

use crate::cmd::flags::BackendFlags;
use crate::CliError;

/// Flags of `iolab verify`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  iolab verify http://127.0.0.1:8080 --model pool")]
pub struct Args {
    /// Base URL of the target, e.g. http://127.0.0.1:8080.
    #[arg(value_name = "URL")]
    pub url: String,
    /// The model the target must name in its answers [default: whatever it names first].
    #[arg(long, short = 'm', value_name = "MODEL")]
    pub model: Option<String>,
    /// Longest wait for one answer.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub timeout: String,
    /// Longest time for all the checks (and again for the backend checks):
    /// checks left when it passes fail as not run.
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    pub deadline: String,
    /// Print the report as JSON instead of lines.
    #[arg(long)]
    pub json: bool,
    /// Ask every check over HTTP/2 with prior knowledge (h2c), as
    /// `attack --http2` sends to an http:// URL.
    #[arg(long)]
    pub http2: bool,
    /// The backends the target uses: each one's own counter must move with
    /// the target's steps (pg_stat_statements, memcached hits, delay-service hits).
    #[command(flatten)]
    pub backends: BackendFlags,
    /// Also check the held connections: `GET /ws` answers 101, each message
    /// on `/ws?steps=sleep:50` is echoed unchanged after the step, and
    /// `GET /events` pushes numbered, timestamped events.
    #[arg(long)]
    pub held: bool,
    /// Skip the backend checks even when addresses are given (or set in IOLAB_*).
    #[arg(long, help_heading = "Backends")]
    pub no_backends: bool,
}

/// Run `iolab verify`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let timeout =
        parse_duration(&args.timeout).map_err(|e| CliError::usage(format!("--timeout: {e}")))?;
    let deadline =
        parse_duration(&args.deadline).map_err(|e| CliError::usage(format!("--deadline: {e}")))?;
    if timeout.is_zero() || deadline.is_zero() {
        return Err(CliError::usage(
            "--timeout and --deadline must be above zero (e.g. 10s)",
        ));
    }
    // Ctrl-C stops the check being read and fails the rest as interrupted;
    // what was checked is still printed (exit 130).
    let cancel = cancel_on_signals()
        .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot install the Ctrl-C handler: {e}")))?;
    let opts = VerifyOptions {
        model: args.model.clone(),
        timeout,
        deadline,
        cancel: Some(cancel.clone()),
        http2: args.http2,
    };
    let mut report = iolab_verify::verify(&args.url, &opts)?;
    let backends = &args.backends.addresses;
    if !args.no_backends && !backends.is_empty() {
        let checks = iolab_verify::verify_backends(&args.url, backends, &opts)?;
        report.checks.extend(checks);
    }
    if args.held {
        let checks = iolab_verify::verify_held(&args.url, &opts)?;
        report.checks.extend(checks);
    }
    let format = Format::json_or_text(args.json);
    let passed = report.passed();
    let bytes = iolab_report::verify::render(&VerifyFile::new(report), format)
        .map_err(|e| CliError::Failed(e.into()))?;
    super::report::print(&bytes);
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
