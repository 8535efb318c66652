//! `iolab report`: render a saved results folder (`RESULTS_DIR/runs.json`) as a
//! terminal table, Markdown, HTML, JSON or CSV, and optionally every chart as
//! PNG; or re-render a document saved with `--json` by `attack`, `batch`,
//! `predict` or `verify` (told apart by its `schema`) in the formats it offers.
//! It only reads: nothing is measured, so the same file gives the same bytes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use iolab_model::runs::{RunsFile, MAX_RUNS_JSON, RUNS_SCHEMA};
use iolab_report::{Document, Format, RenderError};

use crate::CliError;

/// Flags of `iolab report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(value_name = "RESULTS_DIR", help = results_help())]
    pub results: PathBuf,
    #[arg(long, short = 'f', default_value = "table", value_parser = parse_format, help = Format::help())]
    pub format: Format,
    /// Write to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write every chart as a PNG into DIR.
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
}

/// The positional argument's help: every document `report` reads, from its table.
fn results_help() -> String {
    let writers: Vec<&str> = iolab_report::DOCUMENTS
        .iter()
        .map(|d| d.written_by)
        .collect();
    format!(
        "A results folder holding runs.json, or any document iolab saves: {}.",
        iolab_model::steps::listed(&writers)
    )
}

fn parse_format(s: &str) -> Result<Format, iolab_report::UnknownFormat> {
    s.parse::<Format>()
}

/// Read and check `runs.json`; every fault is a one-line usage error.
pub fn load(results: &Path) -> Result<RunsFile, CliError> {
    let file = file_of(results);
    match load_document(results)? {
        Document::Runs(runs) => Ok(*runs),
        other => Err(CliError::usage(format!(
            "{} has schema '{}', expected '{RUNS_SCHEMA}' (is it a runs.json written by 'iolab run'?)",
            file.display(),
            other.schema()
        ))),
    }
}

/// The document of a folder iolab wrote: `runs.json` (`iolab run`, `merge`) or
/// `capacity.json` (`iolab capacity`); a file is itself.
fn file_of(results: &Path) -> PathBuf {
    if !results.is_dir() {
        return results.to_path_buf();
    }
    FOLDER_DOCUMENTS
        .iter()
        .map(|name| results.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| results.join(FOLDER_DOCUMENTS[0]))
}

/// The documents a results folder holds, by the command that writes it.
const FOLDER_DOCUMENTS: [&str; 2] = ["runs.json", "capacity.json"];

/// Read any saved document (a results folder's `runs.json`, or what `attack`,
/// `batch`, `predict` or `verify` printed with `--json`), chosen by its
/// `schema`; every fault is a one-line usage error.
pub fn load_document(results: &Path) -> Result<Document, CliError> {
    let file = file_of(results);
    let bytes = iolab_model::files::read_capped(&file, MAX_RUNS_JSON).map_err(|e| {
        CliError::usage(format!(
            "cannot read {}: {e} (pass a results folder written by 'iolab run' or 'iolab capacity', or a document saved with --json)",
            file.display()
        ))
    })?;
    let text = String::from_utf8(bytes).map_err(|_| {
        CliError::usage(format!("{} is not valid JSON (not UTF-8)", file.display()))
    })?;
    Document::from_json(&text).map_err(|e| CliError::usage(format!("{} {e}", file.display())))
}

/// Write rendered bytes to standard output; a closed pipe (`| head`) is not
/// an error worth a message, any other failed write is (exit 1).
pub fn print(bytes: &[u8]) {
    iolab_files::stdout::write(bytes);
}

/// Run `iolab report`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let doc = load_document(&args.results)?;
    // Charts come from a results folder or a capacity document: refuse before printing.
    if args.png.is_some() && !doc.has_charts() {
        return Err(CliError::usage(format!(
            "--png draws the charts of a results folder or a capacity document; {} is a {} document",
            args.results.display(),
            doc.schema()
        )));
    }
    let bytes = doc.render(args.format).map_err(|e| match e {
        RenderError::Unsupported { .. } => CliError::usage(e),
        other => CliError::Failed(anyhow::anyhow!(other)),
    })?;
    match &args.output {
        Some(path) => iolab_files::write(path, &bytes)
            .map_err(|e| CliError::usage(format!("cannot write {}: {e}", path.display())))?,
        None => print(&bytes),
    }
    if let Some(dir) = &args.png {
        let files = doc.render_pngs(dir).map_err(|e| match e {
            RenderError::Io { .. } => CliError::usage(e),
            other => CliError::Failed(anyhow::anyhow!(other)),
        })?;
        eprintln!("wrote {} charts to {}", files.len(), dir.display());
    }
    Ok(ExitCode::SUCCESS)
}
