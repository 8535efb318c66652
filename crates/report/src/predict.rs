//! Predictions (`iolab.predict/1`, what `iolab predict` simulated): a table
//! with one row per run, then the sentence that explains each; as text,
//! Markdown, the document as JSON, or CSV.

use iolab_model::predict::{PredictFile, Prediction, PREDICT_SCHEMA};
use serde_json::json;

use crate::grid::{self, Grid};
use crate::numbers::{count, ms, opt, percent, rate};
use crate::{csv, Format, RenderError, Renderers};

/// Render a predict document in `format` (one of [`Format::plain`]).
pub fn render(doc: &PredictFile, format: Format) -> Result<Vec<u8>, RenderError> {
    Renderers::<PredictFile> {
        schema: PREDICT_SCHEMA,
        text,
        markdown,
        csv: |d| csv(&d.runs),
    }
    .render(doc, format)
}

/// The table of predictions.
pub fn grid(preds: &[Prediction]) -> Grid {
    let mut g = Grid::new(
        &[
            "run",
            "model",
            "offered",
            "ok",
            "success",
            "goodput/s",
            "p50",
            "p99",
            "in flight",
            "threads",
        ],
        &[false, false, true, true, true, true, true, true, true, true],
    );
    for p in preds {
        g.rows.push(vec![
            p.name.clone(),
            p.model.clone(),
            count(p.offered),
            count(p.ok),
            percent(p.success_ratio),
            rate(p.goodput_rps),
            ms(p.latency_ms.p50),
            ms(p.latency_ms.p99),
            count(p.peak_in_flight),
            opt(p.peak_threads, count),
        ]);
    }
    g
}

/// What was predicted, e.g. `ad-hoc (1 runs, 2 cores, simulated)`.
fn title(doc: &PredictFile) -> String {
    format!(
        "{} ({} runs, {} cores, simulated)",
        doc.plan,
        count(doc.runs.len() as u64),
        doc.cores
    )
}

/// The heading line, the aligned table, then `run: why` for each run.
pub fn text(doc: &PredictFile) -> String {
    let mut lines = vec![format!("prediction: {}", title(doc))];
    lines.extend(grid(&doc.runs).text());
    lines.push(String::new());
    lines.extend(
        doc.runs
            .iter()
            .map(|p| format!("{}: {}", p.name, p.explanation)),
    );
    grid::join(&lines)
}

/// A Markdown table under a heading, the explanations as a list.
pub fn markdown(doc: &PredictFile) -> String {
    let mut lines = vec![format!("## Prediction: {}", title(doc)), String::new()];
    lines.extend(grid(&doc.runs).markdown());
    lines.push(String::new());
    lines.extend(
        doc.runs
            .iter()
            .map(|p| format!("- **{}**: {}", grid::cell(&p.name), p.explanation)),
    );
    grid::join(&lines)
}

/// CSV: one record per run with its raw figures.
pub fn csv(preds: &[Prediction]) -> String {
    csv::records(preds, &Prediction::default(), fields)
}

fn fields(p: &Prediction) -> csv::Fields {
    vec![
        ("name", json!(p.name)),
        ("model", json!(p.model)),
        ("offered", json!(p.offered)),
        ("ok", json!(p.ok)),
        ("success_ratio", json!(p.success_ratio)),
        ("goodput_rps", json!(p.goodput_rps)),
        ("throughput_rps", json!(p.throughput_rps)),
        ("p50_ms", json!(p.latency_ms.p50)),
        ("p99_ms", json!(p.latency_ms.p99)),
        ("peak_in_flight", json!(p.peak_in_flight)),
        ("peak_threads", json!(p.peak_threads)),
        ("capacity_rps", json!(p.capacity_rps)),
        ("first_timeout_s", json!(p.first_timeout_s)),
        ("total_s", json!(p.total_s)),
        ("explanation", json!(p.explanation)),
    ]
}
