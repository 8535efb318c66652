//! Flat exports: JSON (an array of row objects) and CSV (RFC 4180), one row
//! per run, the columns of [`RunRow`](crate::summary::RunRow).

use iolab_model::runs::RunsFile;
use serde_json::Value;

use crate::summary::{self, COLUMNS};

/// JSON: an array with one flat object per run.
pub fn json(file: &RunsFile) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = serde_json::to_vec_pretty(&summary::rows(file))?;
    out.push(b'\n');
    Ok(out)
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Object(_) | Value::Array(_) => v.to_string(),
        other => other.to_string(),
    }
}

/// CSV with a header line; empty cells for figures that were not measured.
pub fn csv(file: &RunsFile) -> String {
    let mut out = COLUMNS.join(",");
    out.push('\n');
    for row in summary::rows(file) {
        let v = serde_json::to_value(&row).unwrap_or(Value::Null);
        let cells: Vec<String> = COLUMNS
            .iter()
            .map(|c| quote(&text(v.get(*c).unwrap_or(&Value::Null))))
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}
