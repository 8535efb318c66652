//! `iolab whatif PRESET...`: verified counterfactuals. Each preset's first
//! target is fitted as a black box, each other target predicted from that
//! fit (B's cost per request calibrated first, unless `--uncalibrated`)
//! and then measured (`iolab_capacity::whatif`); the `iolab.whatif/1`
//! document is printed (text or `--json`) and saved in a results folder.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use iolab_capacity::whatif::WhatIfError;
use iolab_lab::interrupt::{cancel_on_signals, EXIT_INTERRUPTED};
use iolab_lab::preset::Overrides;
use iolab_lab::results;
use iolab_report::Format;

use crate::CliError;

/// Flags of `iolab whatif`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  iolab whatif whatif-jvm-pg-pool                 (HikariCP's 10 bind: WebFlux + R2DBC predicted no gain)
  iolab whatif whatif-rust-pool whatif-cpu --json > whatif.json
  iolab whatif presets/whatif-rust-pool.toml --scale 0.5")]
pub struct Args {
    /// Whatif presets (names or .toml files): a [capacity] table, a
    /// [whatif] table, the service as it runs first, then each change.
    #[arg(value_name = "PRESET", required = true)]
    pub presets: Vec<String>,
    /// Time-scale: IO, objective bounds and steps shrink by F, rates grow by 1/F (0 < F <= 1).
    #[arg(long, value_name = "F")]
    pub scale: Option<f64>,
    /// Results folder [default: results/whatif-<UTC time>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Predict each change from A's CPU per request as read, without
    /// calibrating what a request costs under B's runtime first.
    #[arg(long)]
    pub uncalibrated: bool,
    /// Print the iolab.whatif/1 document instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// No line per step on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Run `iolab whatif`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    if let Some(f) = args.scale {
        if !(f > 0.0 && f <= 1.0) {
            return Err(CliError::usage(format!(
                "--scale {f}: give a factor above 0 and at most 1 (e.g. 0.5)"
            )));
        }
    }
    let cancel = cancel_on_signals()
        .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot install the Ctrl-C handler: {e}")))?;
    let (say, each) = super::capacity::progress(args.quiet);
    let over = Overrides {
        scale: args.scale,
        ..Overrides::default()
    };
    let doc = iolab_capacity::whatif::run(
        &args.presets,
        over,
        !args.uncalibrated,
        cancel.clone(),
        &say,
        &each,
    )
    .map_err(|e| match e {
        WhatIfError::Input(m) => CliError::usage(m),
        WhatIfError::Failed(m) => CliError::Failed(anyhow::anyhow!("{m}")),
    })?;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| results::default_dir("whatif"));
    let fail = |e: String| CliError::Failed(anyhow::anyhow!("cannot write {}: {e}", dir.display()));
    std::fs::create_dir_all(&dir).map_err(|e| fail(e.to_string()))?;
    let json = iolab_report::whatif::render(&doc, Format::Json).map_err(|e| fail(e.to_string()))?;
    iolab_model::files::write_atomic(&dir.join("whatif.json"), &json)
        .map_err(|e| fail(e.to_string()))?;
    if !args.quiet {
        eprintln!("results: {}/", dir.display());
    }
    let bytes = iolab_report::whatif::render(&doc, Format::json_or_text(args.json))
        .map_err(|e| CliError::Failed(e.into()))?;
    super::report::print(&bytes);
    if cancel.load(Ordering::Relaxed) {
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    Ok(ExitCode::SUCCESS)
}
