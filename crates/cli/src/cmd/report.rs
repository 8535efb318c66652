//! `iolab report`: render a saved results folder (`RESULTS_DIR/runs.json`) as a
//! terminal table, Markdown, HTML, JSON or CSV, and optionally every chart as PNG.
//! It only reads: nothing is measured, so the same folder gives the same bytes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use iolab_model::runs::RunsFile;
use iolab_report::Format;

use crate::CliError;

/// Flags of `iolab report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Results folder holding `runs.json` (or the path of a runs.json file).
    #[arg(value_name = "RESULTS_DIR")]
    pub results: PathBuf,
    /// Output format: table, md, html, json or csv.
    #[arg(long, short = 'f', default_value = "table", value_parser = parse_format)]
    pub format: Format,
    /// Write to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write every chart as a PNG into DIR.
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse::<Format>().map_err(|e| e.to_string())
}

/// Read and check `runs.json`; every fault is a one-line usage error.
pub fn load(results: &Path) -> Result<RunsFile, CliError> {
    iolab_model::runs::load(results).map_err(CliError::usage)
}

/// Run `iolab report`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let runs = load(&args.results)?;
    let bytes = iolab_report::render(&runs, args.format)
        .map_err(|e| CliError::Failed(anyhow::anyhow!(e)))?;
    match &args.output {
        Some(path) => std::fs::write(path, &bytes)
            .map_err(|e| CliError::usage(format!("cannot write {}: {e}", path.display())))?,
        None => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = out.write_all(&bytes).and_then(|_| out.flush());
        }
    }
    if let Some(dir) = &args.png {
        let files = iolab_report::render_pngs(&runs, dir).map_err(|e| match e {
            iolab_report::RenderError::Io { .. } => CliError::usage(e),
            other => CliError::Failed(anyhow::anyhow!(other)),
        })?;
        eprintln!("wrote {} charts to {}", files.len(), dir.display());
    }
    Ok(ExitCode::SUCCESS)
}
