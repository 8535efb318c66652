//! The six documents iolab writes, read back by their `schema` tag, and the
//! output formats with their command-line names: what `iolab report FILE`
//! needs to re-render any saved result.

use std::fmt;
use std::str::FromStr;

use iolab_model::attack::{AttackResult, ATTACK_SCHEMA};
use iolab_model::batch::{BatchFile, BATCH_SCHEMA};
use iolab_model::capacity::{CapacityFile, CAPACITY_SCHEMA};
use iolab_model::predict::{PredictFile, PREDICT_SCHEMA};
use iolab_model::runs::{RunsFile, RUNS_SCHEMA};
use iolab_model::verify::{VerifyFile, VERIFY_SCHEMA};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::RenderError;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Terminal text (a table, or an attack's summary lines).
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

    /// The formats of a document without charts: all but HTML.
    pub const PLAIN: [Format; 4] = [Format::Table, Format::Markdown, Format::Json, Format::Csv];

    /// What a command prints: the document as JSON with `--json`, else text.
    pub fn json_or_text(json: bool) -> Format {
        if json {
            Format::Json
        } else {
            Format::Table
        }
    }

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
            "text" => Ok(Format::Table),
            _ => Format::ALL
                .into_iter()
                .find(|f| f.as_str() == s)
                .ok_or_else(|| UnknownFormat(s.to_string())),
        }
    }
}

/// A saved document of any of the five kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum Document {
    /// `iolab.runs/1`: a results folder's `runs.json`.
    Runs(Box<RunsFile>),
    /// `iolab.attack/1`: `iolab attack --json`.
    Attack(Box<AttackResult>),
    /// `iolab.batch/1`: `iolab batch --json`.
    Batch(BatchFile),
    /// `iolab.predict/1`: `iolab predict --json`.
    Predict(PredictFile),
    /// `iolab.verify/1`: `iolab verify --json`.
    Verify(VerifyFile),
    /// `iolab.capacity/1`: `iolab capacity --json` (and its `capacity.json`).
    Capacity(Box<CapacityFile>),
}

/// Why a JSON text is not a document.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Not JSON at all.
    #[error("is not valid JSON: {0}")]
    NotJson(serde_json::Error),
    /// A `schema` tag (or none) that names no document.
    #[error("has schema '{0}', expected one of: {list}", list = Document::SCHEMAS.join(", "))]
    UnknownSchema(String),
    /// The tag is known but the fields do not match it.
    #[error("does not match {schema}: {source}")]
    Mismatch {
        /// The document's tag.
        schema: &'static str,
        /// What serde found.
        source: serde_json::Error,
    },
}

fn parse<T: DeserializeOwned>(v: Value, schema: &'static str) -> Result<T, LoadError> {
    serde_json::from_value(v).map_err(|source| LoadError::Mismatch { schema, source })
}

impl Document {
    /// Every schema tag, results folder first.
    pub const SCHEMAS: [&'static str; 6] = [
        RUNS_SCHEMA,
        ATTACK_SCHEMA,
        BATCH_SCHEMA,
        PREDICT_SCHEMA,
        VERIFY_SCHEMA,
        CAPACITY_SCHEMA,
    ];

    /// Read a document, choosing its type by its `schema` field.
    pub fn from_json(text: &str) -> Result<Self, LoadError> {
        let v: Value = serde_json::from_str(text).map_err(LoadError::NotJson)?;
        let tag = v.get("schema").and_then(Value::as_str).unwrap_or("");
        Ok(match tag {
            RUNS_SCHEMA => Document::Runs(Box::new(parse(v, RUNS_SCHEMA)?)),
            ATTACK_SCHEMA => Document::Attack(Box::new(parse(v, ATTACK_SCHEMA)?)),
            BATCH_SCHEMA => Document::Batch(parse(v, BATCH_SCHEMA)?),
            PREDICT_SCHEMA => Document::Predict(parse(v, PREDICT_SCHEMA)?),
            VERIFY_SCHEMA => Document::Verify(parse(v, VERIFY_SCHEMA)?),
            CAPACITY_SCHEMA => Document::Capacity(Box::new(parse(v, CAPACITY_SCHEMA)?)),
            other => return Err(LoadError::UnknownSchema(other.to_string())),
        })
    }

    /// The document's schema tag.
    pub fn schema(&self) -> &'static str {
        match self {
            Document::Runs(_) => RUNS_SCHEMA,
            Document::Attack(_) => ATTACK_SCHEMA,
            Document::Batch(_) => BATCH_SCHEMA,
            Document::Predict(_) => PREDICT_SCHEMA,
            Document::Verify(_) => VERIFY_SCHEMA,
            Document::Capacity(_) => CAPACITY_SCHEMA,
        }
    }

    /// The formats this document renders in, in help order.
    pub fn formats(&self) -> &'static [Format] {
        match self {
            Document::Runs(_) | Document::Capacity(_) => &Format::ALL,
            Document::Attack(_)
            | Document::Batch(_)
            | Document::Predict(_)
            | Document::Verify(_) => &Format::PLAIN,
        }
    }

    /// Render in `format` (an error names the formats it offers instead).
    pub fn render(&self, format: Format) -> Result<Vec<u8>, RenderError> {
        match self {
            Document::Runs(d) => crate::runs::render(d, format),
            Document::Attack(d) => crate::attack::render(d, format),
            Document::Batch(d) => crate::batch::render(d, format),
            Document::Predict(d) => crate::predict::render(d, format),
            Document::Verify(d) => crate::verify::render(d, format),
            Document::Capacity(d) => crate::capacity::render(d, format),
        }
    }

    /// Does it have charts (`iolab report --png`)?
    pub fn has_charts(&self) -> bool {
        matches!(self, Document::Runs(_) | Document::Capacity(_))
    }

    /// Write every chart as `<dir>/<id>.png`: a results folder's, or a
    /// capacity search's; the documents without charts say so.
    pub fn render_pngs(
        &self,
        dir: &std::path::Path,
    ) -> Result<Vec<std::path::PathBuf>, RenderError> {
        match self {
            Document::Runs(d) => crate::runs::render_pngs(d, dir),
            Document::Capacity(d) => crate::runs::png::write_all(
                d.searches.iter().flat_map(crate::capacity::charts),
                dir,
            ),
            other => Err(RenderError::NoCharts {
                schema: other.schema(),
            }),
        }
    }
}
