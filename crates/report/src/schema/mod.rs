//! The JSON schemas of saved documents, generated from their types
//! (schemars) so they cannot drift from what the lab reads: one for each
//! document in [`DOCUMENTS`], plus the two parts that travel on their own
//! (a run's timeline, `iolab.spans/1`, which targets serve at `/spans`, and a
//! results folder's `environment.json`).
//!
//! `schema/*.schema.json` are these, written by
//! `IOLAB_WRITE_SCHEMAS=1 cargo test -p iolab-report --test integration schemas`; that
//! test fails while a committed file differs, and checks every committed
//! result against them.

use std::path::Path;

use iolab_model::environment::Environment;
use iolab_model::spans::{Timeline, SPANS_SCHEMA};
use serde_json::Value;

use crate::document::DOCUMENTS;

pub mod derive;

pub use derive::{tagged, untagged};

/// The file a results folder keeps its [`Environment`] in (no `schema` tag).
const ENVIRONMENT_JSON: &str = "environment.json";

/// One schema file under `schema/`.
#[derive(Debug, Clone)]
pub struct SchemaFile {
    /// Its file name: `runs.schema.json`.
    pub name: String,
    /// The `schema` tag it pins, if its documents carry one.
    pub tag: Option<&'static str>,
    /// The schema (JSON Schema 2020-12).
    pub schema: Value,
}

impl SchemaFile {
    /// The file's text as committed: pretty JSON and a final newline.
    pub fn text(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.schema).expect("a schema is JSON");
        text.push('\n');
        text
    }
}

/// `iolab.runs/1` -> `runs.schema.json`.
fn file_name(tag: &str) -> String {
    let kind = tag.trim_start_matches("iolab.");
    let kind = kind.split('/').next().unwrap_or(kind);
    format!("{kind}.schema.json")
}

/// Every schema file: each document's (in [`DOCUMENTS`] order), then the
/// spans timeline's and `environment.json`'s.
pub fn schema_files() -> Vec<SchemaFile> {
    let mut files: Vec<SchemaFile> = DOCUMENTS
        .iter()
        .map(|d| SchemaFile {
            name: file_name(d.schema),
            tag: Some(d.schema),
            schema: (d.json_schema)(d.schema),
        })
        .collect();
    files.push(SchemaFile {
        name: file_name(SPANS_SCHEMA),
        tag: Some(SPANS_SCHEMA),
        schema: tagged::<Timeline>(SPANS_SCHEMA),
    });
    files.push(SchemaFile {
        name: "environment.schema.json".into(),
        tag: None,
        schema: untagged::<Environment>(),
    });
    files
}

/// The schema a saved file is checked against: by its `schema` tag, or
/// `environment.json` by its name; `None` when neither names one.
pub fn schema_of_file(path: &Path, doc: &Value) -> Option<SchemaFile> {
    let tag = doc.get("schema").and_then(Value::as_str);
    let untagged_env =
        tag.is_none() && path.file_name().and_then(|n| n.to_str()) == Some(ENVIRONMENT_JSON);
    schema_files().into_iter().find(|f| match (tag, f.tag) {
        (Some(t), Some(own)) => t == own,
        (None, None) => untagged_env,
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn files_are_named_by_their_tags_and_pin_them() {
        let files = schema_files();
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "runs.schema.json",
                "attack.schema.json",
                "batch.schema.json",
                "predict.schema.json",
                "verify.schema.json",
                "capacity.schema.json",
                "whatif.schema.json",
                "spans.schema.json",
                "environment.schema.json",
            ]
        );
        for f in files.iter().filter(|f| f.tag.is_some()) {
            assert_eq!(f.schema["properties"]["schema"]["const"], f.tag.unwrap());
            let required = f.schema["required"].as_array().expect("required");
            assert!(required.contains(&json!("schema")), "{}", f.name);
        }
    }

    #[test]
    fn a_file_finds_its_schema_by_tag_or_by_name() {
        let runs = json!({"schema": "iolab.runs/1"});
        let found = schema_of_file(Path::new("x/runs.json"), &runs).unwrap();
        assert_eq!(found.name, "runs.schema.json");
        let env = schema_of_file(Path::new("x/environment.json"), &json!({})).unwrap();
        assert_eq!(env.name, "environment.schema.json");
        assert!(schema_of_file(Path::new("x/other.json"), &json!({})).is_none());
        let odd = json!({"schema": "iolab.nothing/1"});
        assert!(schema_of_file(Path::new("environment.json"), &odd).is_none());
    }
}
