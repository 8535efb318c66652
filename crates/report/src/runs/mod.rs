//! A results folder (`runs.json`, `iolab.runs/1`): the comparison table
//! (terminal and Markdown), flat JSON and CSV with one row per run, the HTML
//! page with inline SVG charts, and the same charts as PNGs.
//!
//! [`summary`] flattens each run into a [`RunRow`](summary::RunRow);
//! [`groups`] gathers runs that faced the same load; [`table`] lays a group
//! out as a grid; [`charts`] draws the figures the HTML page and `--png` share,
//! thread timelines ([`timeline`]) among them.

pub mod charts;
mod compare;
pub mod docs;
mod flat;
mod groups;
pub mod held;
pub(crate) mod html;
mod markdown;
pub(crate) mod png;
mod published;
mod section;
pub mod summary;
mod table;
mod terminal;
mod timeline;
pub mod waiting;

use std::path::{Path, PathBuf};

use iolab_model::runs::{RunRecord, RunsFile};

use crate::{Format, RenderError};

pub use png::distinct_colours;

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
    crate::explain_with_cores(run, Some(runs.environment.cores))
}
