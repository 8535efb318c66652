//! Renderers of saved results. They read a [`RunsFile`] and return bytes;
//! they never measure, and the same input always gives the same bytes.

use iolab_model::runs::RunsFile;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Terminal table.
    Table,
    /// Markdown table.
    Markdown,
    /// Self-contained HTML with inline SVG charts.
    Html,
    /// Flat JSON, one object per run.
    Json,
    /// Flat CSV, one row per run.
    Csv,
}

/// A rendering failure.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// Not built yet.
    #[error("format not built yet")]
    NotBuilt,
}

/// Render results in a format.
pub fn render(_runs: &RunsFile, _format: Format) -> Result<Vec<u8>, RenderError> {
    Err(RenderError::NotBuilt)
}
