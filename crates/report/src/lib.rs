//! Renderers of every document iolab writes. Each takes the document (its
//! type lives in `iolab-model`) and returns bytes; none measures or reads the
//! clock, so the same input always gives the same bytes and any saved result
//! can be re-rendered at any time.
//!
//! One module per document, each with its text (terminal), Markdown, JSON
//! and CSV renderers: [`runs`] (a results folder; also HTML with inline SVG
//! [`charts`] and PNGs), [`attack`], [`batch`], [`predict`] and [`verify`].
//! Every figure goes through one set of rules ([`numbers`]) and every table
//! through one grid ([`grid`]), so a p99 of 101.3 ms reads `101ms` in all of
//! them. [`Document`] reads any of them back from JSON by its `schema`
//! ([`DOCUMENTS`] lists them), and [`schema`] generates their JSON schemas
//! from their types.

pub mod attack;
pub mod batch;
pub mod beyond;
pub mod capacity;
mod csv;
mod document;
mod explain;
mod format;
pub mod grid;
pub mod live;
pub mod numbers;
pub mod predict;
pub mod runs;
pub mod schema;
pub mod svg;
pub mod usl;
pub mod verify;
pub mod whatif;

use std::path::PathBuf;

use serde::Serialize;

pub use document::{Document, DocumentDef, LoadError, DOCUMENTS};
pub use explain::{caveats, explain, explain_with_cores};
pub use format::{Format, FormatDef, UnknownFormat};
pub use runs::{charts, distinct_colours, explain_in, render, render_pngs, summary};

/// A rendering failure.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// Serializing a JSON export failed.
    #[error("cannot serialize the rows: {0}")]
    Json(#[from] serde_json::Error),
    /// The document has no renderer for that format (e.g. HTML of an attack).
    #[error("{schema} has no {format} rendering (it offers: {offered})")]
    Unsupported {
        /// The document's schema tag.
        schema: &'static str,
        /// The format asked for.
        format: Format,
        /// The formats it offers, comma-separated.
        offered: String,
    },
    /// `--png` of a document that draws no chart.
    #[error("{schema} draws no charts: --png takes a results folder (iolab run) or a capacity document (iolab capacity)")]
    NoCharts {
        /// The document's schema tag.
        schema: &'static str,
    },
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

/// A document as pretty JSON with a final newline: what every `--json` prints.
pub(crate) fn json<T: Serialize>(doc: &T) -> Result<Vec<u8>, RenderError> {
    let mut out = serde_json::to_vec_pretty(doc)?;
    out.push(b'\n');
    Ok(out)
}

/// A document's renderers other than JSON (which is the document itself).
pub(crate) struct Renderers<T> {
    /// The document's schema tag, for errors.
    pub schema: &'static str,
    /// Terminal text.
    pub text: fn(&T) -> String,
    /// Markdown.
    pub markdown: fn(&T) -> String,
    /// CSV.
    pub csv: fn(&T) -> String,
}

impl<T: Serialize> Renderers<T> {
    /// Render `doc` in one of [`Format::plain`]; HTML is refused.
    pub fn render(&self, doc: &T, format: Format) -> Result<Vec<u8>, RenderError> {
        Ok(match format {
            Format::Table => (self.text)(doc).into_bytes(),
            Format::Markdown => (self.markdown)(doc).into_bytes(),
            Format::Json => json(doc)?,
            Format::Csv => (self.csv)(doc).into_bytes(),
            Format::Html => return Err(unsupported(self.schema, format, &Format::plain())),
        })
    }
}

/// The error for a format a document does not offer.
pub(crate) fn unsupported(schema: &'static str, format: Format, offered: &[Format]) -> RenderError {
    RenderError::Unsupported {
        schema,
        format,
        offered: offered
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}
