//! Flat exports: JSON (an array of row objects) and CSV (RFC 4180), one row
//! per run, the columns of [`RunRow`](crate::runs::summary::RunRow).

use iolab_model::runs::RunsFile;

use crate::csv;
use crate::runs::summary::{self, COLUMNS};

/// JSON: an array with one flat object per run.
pub fn json(file: &RunsFile) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = serde_json::to_vec_pretty(&summary::rows(file))?;
    out.push(b'\n');
    Ok(out)
}

/// CSV with a header line; empty cells for figures that were not measured.
pub fn csv(file: &RunsFile) -> String {
    let rows = summary::rows(file);
    csv::table(&COLUMNS, rows.iter().map(|r| csv::cells(r, &COLUMNS)))
}
