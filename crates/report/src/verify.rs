//! A contract check (`iolab.verify/1`, what `iolab verify` found): one line
//! per check, `ok` or `FAIL` with what was seen, then the count; as text,
//! Markdown, the document as JSON, or CSV.

use iolab_model::verify::{Check, VerifyFile, VerifyReport, VERIFY_SCHEMA};
use serde_json::json;

use crate::grid::{self, Grid};
use crate::{csv, Format, RenderError, Renderers};

/// Render a verify document in `format` (one of [`Format::plain`]).
pub fn render(doc: &VerifyFile, format: Format) -> Result<Vec<u8>, RenderError> {
    Renderers::<VerifyFile> {
        schema: VERIFY_SCHEMA,
        text: |d| text(&d.report),
        markdown: |d| markdown(&d.report),
        csv: |d| csv(&d.report),
    }
    .render(doc, format)
}

fn mark(c: &Check) -> &'static str {
    if c.passed {
        "ok"
    } else {
        "FAIL"
    }
}

/// `URL: 7 passed, 1 failed`.
fn tally(r: &VerifyReport) -> String {
    let failed = r.checks.iter().filter(|c| !c.passed).count();
    let over = r
        .protocol
        .as_ref()
        .map_or_else(String::new, |p| format!(" (over {p})"));
    format!(
        "{}{over}: {} passed, {failed} failed",
        r.target,
        r.checks.len() - failed
    )
}

/// `ok   name  detail` per check (names aligned), then the tally.
pub fn text(r: &VerifyReport) -> String {
    let width = r.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
    let mut lines: Vec<String> = r
        .checks
        .iter()
        .map(|c| format!("{:<4} {:width$}  {}", mark(c), c.name, c.detail))
        .collect();
    lines.push(tally(r));
    grid::join(&lines)
}

/// A Markdown table of the checks, the tally under it.
pub fn markdown(r: &VerifyReport) -> String {
    let mut g = Grid::new(&["", "check", "detail"], &[false, false, false]);
    for c in &r.checks {
        g.rows
            .push(vec![mark(c).into(), c.name.clone(), c.detail.clone()]);
    }
    let mut lines = vec![format!("## Verify {}", r.target), String::new()];
    lines.extend(g.markdown());
    lines.push(String::new());
    lines.push(tally(r));
    grid::join(&lines)
}

/// CSV: one record per check.
pub fn csv(r: &VerifyReport) -> String {
    let blank = Check {
        name: String::new(),
        passed: false,
        detail: String::new(),
    };
    csv::records(&r.checks, &blank, |c| {
        vec![
            ("check", json!(c.name)),
            ("passed", json!(c.passed)),
            ("detail", json!(c.detail)),
        ]
    })
}
