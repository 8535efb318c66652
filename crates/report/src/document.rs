//! The documents iolab writes ([`DOCUMENTS`]: each one's schema tag, writer,
//! charts and reader), read back by their `schema` tag, and the output
//! formats ([`Format::def`]: names, aliases, charts): what `iolab report
//! FILE` needs to re-render any saved result, and what its help lists.

use std::fmt;
use std::str::FromStr;

use iolab_model::attack::{AttackResult, ATTACK_SCHEMA};
use iolab_model::batch::{BatchFile, BATCH_SCHEMA};
use iolab_model::capacity::{CapacityFile, CAPACITY_SCHEMA};
use iolab_model::predict::{PredictFile, PREDICT_SCHEMA};
use iolab_model::runs::{RunsFile, RUNS_SCHEMA};
use iolab_model::verify::{VerifyFile, VERIFY_SCHEMA};
use iolab_model::whatif::{WhatIfFile, WHATIF_SCHEMA};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::schema::tagged;
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

/// What one output format is: its names and whether it draws charts.
#[derive(Debug, Clone, Copy)]
pub struct FormatDef {
    /// The name on the command line: `md`.
    pub name: &'static str,
    /// Other names it answers to: `markdown`.
    pub aliases: &'static [&'static str],
    /// It draws charts, so only documents with charts offer it.
    pub charts: bool,
}

impl Format {
    /// Every format, in help order.
    pub const ALL: &'static [Format] = &[
        Format::Table,
        Format::Markdown,
        Format::Html,
        Format::Json,
        Format::Csv,
    ];

    /// Its definition: the one registration of a format.
    pub fn def(self) -> &'static FormatDef {
        match self {
            Format::Table => &FormatDef {
                name: "table",
                aliases: &["text"],
                charts: false,
            },
            Format::Markdown => &FormatDef {
                name: "md",
                aliases: &["markdown"],
                charts: false,
            },
            Format::Html => &FormatDef {
                name: "html",
                aliases: &[],
                charts: true,
            },
            Format::Json => &FormatDef {
                name: "json",
                aliases: &[],
                charts: false,
            },
            Format::Csv => &FormatDef {
                name: "csv",
                aliases: &[],
                charts: false,
            },
        }
    }

    /// The formats of a document without charts, in help order.
    pub fn plain() -> Vec<Format> {
        Self::ALL
            .iter()
            .copied()
            .filter(|f| !f.def().charts)
            .collect()
    }

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
        self.def().name
    }

    /// Every name, for messages: `table, md, html, json, csv`.
    pub fn names() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|f| f.as_str()).collect();
        names.join(", ")
    }

    /// `--format`'s help: every format, its aliases, and which documents
    /// offer the ones that draw charts (from the document table).
    pub fn help() -> String {
        let charted: Vec<&str> = DOCUMENTS
            .iter()
            .filter(|d| d.charts)
            .map(|d| d.about)
            .collect();
        let each: Vec<String> = Self::ALL
            .iter()
            .map(|f| {
                let d = f.def();
                let mut s = d.name.to_string();
                if !d.aliases.is_empty() {
                    s += &format!(" (or {})", d.aliases.join(", "));
                }
                if d.charts {
                    s += &format!(" ({} only)", charted.join(", "));
                }
                s
            })
            .collect();
        let each: Vec<&str> = each.iter().map(String::as_str).collect();
        format!("Output format: {}.", iolab_model::steps::listed(&each))
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A format name that is not one of [`Format::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format '{0}' (expected one of: {names})", names = Format::names())]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .iter()
            .copied()
            .find(|f| f.as_str() == s || f.def().aliases.contains(&s))
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// A saved document of any kind in [`DOCUMENTS`].
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
    /// `iolab.whatif/1`: `iolab whatif --json` (and its `whatif.json`).
    WhatIf(Box<WhatIfFile>),
}

/// Why a JSON text is not a document.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Not JSON at all.
    #[error("is not valid JSON: {0}")]
    NotJson(serde_json::Error),
    /// A `schema` tag (or none) that names no document.
    #[error("has schema '{0}', expected one of: {list}", list = Document::schemas().join(", "))]
    UnknownSchema(String),
    /// An attack's counts do not balance (`ok` above `sent`, ...): edited
    /// or corrupt, refused by the rule `iolab merge` applies.
    #[error("does not balance ({0}): the document was edited or is corrupt")]
    Unbalanced(String),
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

/// What one saved document is: its schema tag, who writes it, whether it
/// draws charts, and how it is read.
#[derive(Debug, Clone, Copy)]
pub struct DocumentDef {
    /// Its `schema` tag: `iolab.attack/1`.
    pub schema: &'static str,
    /// What it is, in a phrase for help: `results folders`.
    pub about: &'static str,
    /// What writes it: `iolab attack --json`.
    pub written_by: &'static str,
    /// It has charts (HTML and PNG).
    pub charts: bool,
    /// Read it from JSON known to carry its tag.
    pub read: fn(Value) -> Result<Document, LoadError>,
    /// Its JSON schema, generated from its type with its tag pinned
    /// (`schema/*.schema.json`, see [`crate::schema`]).
    pub json_schema: fn(&'static str) -> Value,
}

/// Every document, results folder first: the one registration of each.
pub const DOCUMENTS: &[DocumentDef] = &[
    DocumentDef {
        schema: RUNS_SCHEMA,
        about: "results folders",
        written_by: "iolab run (runs.json)",
        charts: true,
        read: |v| {
            let mut runs: RunsFile = parse(v, RUNS_SCHEMA)?;
            for r in &runs.runs {
                if let Some(a) = &r.attack {
                    a.check_accounting()
                        .map_err(|e| LoadError::Unbalanced(format!("run '{}': {e}", r.name)))?;
                }
            }
            runs.refresh_rates();
            Ok(Document::Runs(Box::new(runs)))
        },
        json_schema: tagged::<RunsFile>,
    },
    DocumentDef {
        schema: ATTACK_SCHEMA,
        about: "attacks",
        written_by: "iolab attack --json",
        charts: false,
        read: |v| {
            let mut a: AttackResult = parse(v, ATTACK_SCHEMA)?;
            // 125% ok is what no run measures: `merge`'s rule, applied on read.
            a.check_accounting().map_err(LoadError::Unbalanced)?;
            a.refresh_rates();
            Ok(Document::Attack(Box::new(a)))
        },
        json_schema: tagged::<AttackResult>,
    },
    DocumentDef {
        schema: BATCH_SCHEMA,
        about: "batches",
        written_by: "iolab batch --json",
        charts: false,
        read: |v| Ok(Document::Batch(parse(v, BATCH_SCHEMA)?)),
        json_schema: tagged::<BatchFile>,
    },
    DocumentDef {
        schema: PREDICT_SCHEMA,
        about: "predictions",
        written_by: "iolab predict --json",
        charts: false,
        read: |v| Ok(Document::Predict(parse(v, PREDICT_SCHEMA)?)),
        json_schema: tagged::<PredictFile>,
    },
    DocumentDef {
        schema: VERIFY_SCHEMA,
        about: "verify reports",
        written_by: "iolab verify --json",
        charts: false,
        read: |v| Ok(Document::Verify(parse(v, VERIFY_SCHEMA)?)),
        json_schema: tagged::<VerifyFile>,
    },
    DocumentDef {
        schema: CAPACITY_SCHEMA,
        about: "capacity searches",
        written_by: "iolab capacity --json (and its capacity.json)",
        charts: true,
        read: |v| Ok(Document::Capacity(Box::new(parse(v, CAPACITY_SCHEMA)?))),
        json_schema: tagged::<CapacityFile>,
    },
    DocumentDef {
        schema: WHATIF_SCHEMA,
        about: "what-if pairs",
        written_by: "iolab whatif (its whatif.json)",
        charts: false,
        read: |v| Ok(Document::WhatIf(Box::new(parse(v, WHATIF_SCHEMA)?))),
        json_schema: tagged::<WhatIfFile>,
    },
];

impl Document {
    /// Every schema tag, results folder first.
    pub fn schemas() -> Vec<&'static str> {
        DOCUMENTS.iter().map(|d| d.schema).collect()
    }

    /// Read a document, choosing its type by its `schema` field.
    pub fn from_json(text: &str) -> Result<Self, LoadError> {
        let v: Value = serde_json::from_str(text).map_err(LoadError::NotJson)?;
        let tag = v.get("schema").and_then(Value::as_str).unwrap_or("");
        match DOCUMENTS.iter().find(|d| d.schema == tag) {
            Some(d) => (d.read)(v),
            None => Err(LoadError::UnknownSchema(tag.to_string())),
        }
    }

    /// Its definition in [`DOCUMENTS`].
    pub fn def(&self) -> &'static DocumentDef {
        let schema = match self {
            Document::Runs(_) => RUNS_SCHEMA,
            Document::Attack(_) => ATTACK_SCHEMA,
            Document::Batch(_) => BATCH_SCHEMA,
            Document::Predict(_) => PREDICT_SCHEMA,
            Document::Verify(_) => VERIFY_SCHEMA,
            Document::Capacity(_) => CAPACITY_SCHEMA,
            Document::WhatIf(_) => WHATIF_SCHEMA,
        };
        DOCUMENTS
            .iter()
            .find(|d| d.schema == schema)
            .expect("every document is in DOCUMENTS")
    }

    /// The document's schema tag.
    pub fn schema(&self) -> &'static str {
        self.def().schema
    }

    /// The formats this document renders in, in help order.
    pub fn formats(&self) -> Vec<Format> {
        if self.def().charts {
            Format::ALL.to_vec()
        } else {
            Format::plain()
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
            Document::WhatIf(d) => crate::whatif::render(d, format),
        }
    }

    /// Does it have charts (`iolab report --png`)?
    pub fn has_charts(&self) -> bool {
        self.def().charts
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_parses_by_its_names_and_the_messages_list_them_all() {
        for &f in Format::ALL {
            assert_eq!(f.as_str().parse::<Format>().unwrap(), f);
            for alias in f.def().aliases {
                assert_eq!(alias.parse::<Format>().unwrap(), f);
            }
            assert!(Format::help().contains(f.as_str()), "{f}");
            assert!(UnknownFormat("x".into()).to_string().contains(f.as_str()));
        }
        for d in DOCUMENTS.iter().filter(|d| d.charts) {
            assert!(Format::help().contains(d.about), "{}", d.schema);
        }
        assert_eq!(
            Format::help(),
            "Output format: table (or text), md (or markdown), html (results folders, capacity searches only), json or csv."
        );
    }

    #[test]
    fn an_unknown_schema_names_every_document() {
        let e = Document::from_json(r#"{"schema": "iolab.nothing/1"}"#).unwrap_err();
        for d in DOCUMENTS {
            assert!(e.to_string().contains(d.schema), "{e}");
        }
    }
}
