//! The documents iolab writes ([`DOCUMENTS`]: each one's schema tag, writer,
//! charts and reader), read back by their `schema` tag: what `iolab report
//! FILE` needs to re-render any saved result in any [`Format`].

use iolab_model::attack::{AttackResult, ATTACK_SCHEMA};
use iolab_model::batch::{BatchFile, BATCH_SCHEMA};
use iolab_model::capacity::{CapacityFile, CAPACITY_SCHEMA};
use iolab_model::predict::{PredictFile, PREDICT_SCHEMA};
use iolab_model::runs::{RunsFile, RUNS_SCHEMA};
use iolab_model::verify::{VerifyFile, VERIFY_SCHEMA};
use iolab_model::whatif::{WhatIfFile, WHATIF_SCHEMA};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::schema::derive::tagged;
use crate::{Format, RenderError};

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
    /// A time or rate no run produces (a negative duration, a p50 above
    /// the max, a capacity of 0 or 1e308): edited or corrupt.
    #[error("holds a figure no run produces ({0}): the document was edited or is corrupt")]
    Figures(String),
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
            for r in &mut runs.runs {
                if let Some(a) = &mut r.attack {
                    a.target = iolab_model::text::escape_controls(&a.target);
                    a.check_accounting()
                        .map_err(|e| LoadError::Unbalanced(format!("run '{}': {e}", r.name)))?;
                    a.check_figures()
                        .map_err(|e| LoadError::Figures(format!("run '{}': {e}", r.name)))?;
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
            a.check_accounting()
                .map_err(|e| LoadError::Unbalanced(e.to_string()))?;
            a.check_figures()
                .map_err(|e| LoadError::Figures(e.to_string()))?;
            // Shown on a terminal by every renderer: a clear-screen or a
            // bell in it is shown escaped (issue 49 finding 12).
            a.target = iolab_model::text::escape_controls(&a.target);
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
        read: |v| {
            let mut c: CapacityFile = parse(v, CAPACITY_SCHEMA)?;
            c.check_figures()
                .map_err(|e| LoadError::Figures(e.to_string()))?;
            for s in &mut c.searches {
                s.target = iolab_model::text::escape_controls(&s.target);
            }
            Ok(Document::Capacity(Box::new(c)))
        },
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
    fn an_unknown_schema_names_every_document() {
        let e = Document::from_json(r#"{"schema": "iolab.nothing/1"}"#).unwrap_err();
        for d in DOCUMENTS {
            assert!(e.to_string().contains(d.schema), "{e}");
        }
    }
}
