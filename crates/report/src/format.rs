//! The output formats and their command-line names.

use std::fmt;
use std::str::FromStr;

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

impl Format {
    /// Every format, in help order.
    pub const ALL: [Format; 5] = [
        Format::Table,
        Format::Markdown,
        Format::Html,
        Format::Json,
        Format::Csv,
    ];

    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Markdown => "md",
            Format::Html => "html",
            Format::Json => "json",
            Format::Csv => "csv",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A format name that is not one of [`Format::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format '{0}' (expected one of: table, md, html, json, csv)")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "markdown" => Ok(Format::Markdown),
            _ => Format::ALL
                .into_iter()
                .find(|f| f.as_str() == s)
                .ok_or_else(|| UnknownFormat(s.to_string())),
        }
    }
}
