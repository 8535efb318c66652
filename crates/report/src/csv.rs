//! CSV (RFC 4180) for every document: a header line, then one record per row,
//! a field quoted only when it holds a comma, quote or line break. Written by
//! hand: the columns are the documents' own and the quoting rule is four
//! lines, less than a dependency's set-up. Numbers stay raw (as JSON writes
//! them), so a spreadsheet gets the measured values, not rounded text.

use serde_json::Value;

/// One field, quoted when it must be.
pub fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A JSON value as a cell: strings bare, null empty, the rest as JSON.
pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        // A list of phrases (caveats): one cell, one phrase after another.
        Value::Array(items) => items.iter().map(cell).collect::<Vec<_>>().join(" | "),
        other => other.to_string(),
    }
}

/// A header and records, each line ending with a newline.
pub fn table(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut out = header.join(",");
    out.push('\n');
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| quote(c)).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// Named fields of one record, in column order.
pub type Fields = Vec<(&'static str, Value)>;

/// One record per item; the header comes from the field names of `blank`
/// (so an empty list still gets its header).
pub fn records<T>(items: &[T], blank: &T, fields: impl Fn(&T) -> Fields) -> String {
    let header: Vec<&str> = fields(blank).into_iter().map(|(k, _)| k).collect();
    let rows = items
        .iter()
        .map(|i| fields(i).iter().map(|(_, v)| cell(v)).collect());
    table(&header, rows)
}

/// Cells for `columns` of a serializable row, in that order.
pub fn cells<T: serde::Serialize>(row: &T, columns: &[&str]) -> Vec<String> {
    let v = serde_json::to_value(row).unwrap_or(Value::Null);
    columns
        .iter()
        .map(|c| cell(v.get(*c).unwrap_or(&Value::Null)))
        .collect()
}
