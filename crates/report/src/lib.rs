//! Renderers of saved results. They read a [`RunsFile`] and return bytes;
//! they never measure and never read the clock, so the same input always gives
//! the same bytes and a results folder can be re-rendered at any time.
//!
//! One result model, many renderers: [`summary`] flattens each run into a
//! [`RunRow`](summary::RunRow); the table, Markdown, JSON and CSV renderers
//! print rows; the HTML page and the PNGs draw the [`charts`], which are
//! hand-written SVG ([`svg`]).

pub mod charts;
mod explain;
mod flat;
mod format;
mod groups;
mod html;
mod markdown;
mod numbers;
mod png;
mod published;
pub mod summary;
pub mod svg;
mod table;
mod terminal;

use std::path::{Path, PathBuf};

use iolab_model::runs::{RunRecord, RunsFile};

pub use explain::{explain, explain_with_cores};
pub use format::{Format, UnknownFormat};
pub use png::distinct_colours;

/// A rendering failure.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// Serializing a flat export failed.
    #[error("cannot serialize the rows: {0}")]
    Json(#[from] serde_json::Error),
    /// An SVG chart could not be rasterised.
    #[error("cannot rasterise chart '{chart}': {reason}")]
    Raster {
        /// Chart id.
        chart: String,
        /// What went wrong.
        reason: String,
    },
    /// Writing a file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Render results in a format. Pure: no clock, no filesystem.
pub fn render(runs: &RunsFile, format: Format) -> Result<Vec<u8>, RenderError> {
    Ok(match format {
        Format::Table => terminal::render(runs).into_bytes(),
        Format::Markdown => markdown::render(runs).into_bytes(),
        Format::Html => html::render(runs).into_bytes(),
        Format::Json => flat::json(runs)?,
        Format::Csv => flat::csv(runs).into_bytes(),
    })
}

/// Write every chart of the report as a PNG into `dir` (created if missing);
/// returns the files written, in chart order.
pub fn render_pngs(runs: &RunsFile, dir: &Path) -> Result<Vec<PathBuf>, RenderError> {
    png::render_all(runs, dir)
}

/// The record's explanation, with the machine's core count from the file
/// (it decides the event-loop defaults).
pub fn explain_in(runs: &RunsFile, run: &RunRecord) -> String {
    explain_with_cores(run, Some(runs.environment.cores))
}
