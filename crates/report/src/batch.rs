//! Batches (`iolab.batch/1`, what `iolab batch` ran): one row per run with
//! its total and per-task-type times and the resources it took, failures
//! listed below; as text, Markdown, the document as JSON, or CSV.

use iolab_model::batch::{BatchFile, BatchResult, TaskTypeStats, BATCH_SCHEMA};
use serde_json::{json, Value};

use crate::grid::{self, Grid};
use crate::numbers::{count, mib, ms, opt, percent, secs};
use crate::{csv, Format, RenderError, Renderers};

/// Render a batch document in `format` (one of [`Format::plain`]).
pub fn render(doc: &BatchFile, format: Format) -> Result<Vec<u8>, RenderError> {
    Renderers::<BatchFile> {
        schema: BATCH_SCHEMA,
        text: |d| text(&d.runs),
        markdown: |d| markdown(&d.runs),
        csv: |d| csv(&d.runs),
    }
    .render(doc, format)
}

/// Knobs shown in the `params` column, in this order (the task counts are the
/// same for every row of a sweep and stay in the JSON).
/// Parameters shown before the knobs (the tasks) and after them (the
/// master's set-up and the run's scale and seed); the knobs come from the
/// one knob list.
const TASKS: [&str; 2] = ["calls", "ms"];
const AFTER: [&str; 5] = ["worker", "shared_pool", "loop_threads", "scale", "seed"];

/// The parameter names shown, in order.
fn shown() -> impl Iterator<Item = &'static str> {
    let knobs = iolab_model::KNOBS.iter().map(|k| k.name);
    TASKS.into_iter().chain(knobs).chain(AFTER)
}

/// `calls=100 ms=1000 threads=8`, from the parameters [`shown`].
pub fn params_label(r: &BatchResult) -> String {
    shown()
        .filter_map(|k| {
            r.params.get(k).map(|v| match v {
                Value::String(s) => format!("{k}={s}"),
                v => format!("{k}={v}"),
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn model(r: &BatchResult) -> String {
    r.model.map_or("-".into(), |m| m.to_string())
}

/// The table of runs.
pub fn grid(runs: &[BatchResult]) -> Grid {
    let mut g = Grid::new(
        &[
            "model",
            "params",
            "tasks",
            "failed",
            "total",
            "cpu mean",
            "cpu p99",
            "io mean",
            "io p99",
            "io wait",
            "io in svc",
            "threads",
            "RSS",
            "CPU use",
        ],
        &[
            false, false, true, true, true, true, true, true, true, true, true, true, true, true,
        ],
    );
    for r in runs {
        let (cpu, io) = (r.by_type.get("cpu"), r.by_type.get("io"));
        let stat = |s: Option<&TaskTypeStats>, f: fn(&TaskTypeStats) -> f64| opt(s.map(f), ms);
        g.rows.push(vec![
            model(r),
            params_label(r),
            count(r.tasks),
            count(r.failed),
            secs(r.total_s),
            stat(cpu, |s| s.mean_ms),
            stat(cpu, |s| s.p99_ms),
            stat(io, |s| s.mean_ms),
            stat(io, |s| s.p99_ms),
            stat(io, |s| s.wait_mean_ms),
            opt(r.counters.get("peak_io_in_service"), |v| {
                count(v.round() as u64)
            }),
            count(r.peak_threads),
            mib(r.peak_rss_mb),
            percent(r.cpu_utilisation),
        ]);
    }
    g
}

/// `model params: why`, one per run that failed or stopped early.
fn failures(runs: &[BatchResult]) -> Vec<String> {
    runs.iter()
        .filter_map(|r| {
            let why = r.failure.as_deref()?;
            Some(format!("{} {}: {why}", model(r), params_label(r)))
        })
        .collect()
}

/// The aligned table, then `! ...` for each failure.
pub fn text(runs: &[BatchResult]) -> String {
    let mut lines = grid(runs).text();
    lines.extend(failures(runs).iter().map(|f| format!("! {f}")));
    grid::join(&lines)
}

/// A Markdown table, failures as a list under it.
pub fn markdown(runs: &[BatchResult]) -> String {
    let mut lines = vec![
        format!("## Batch: {} runs", count(runs.len() as u64)),
        String::new(),
    ];
    lines.extend(grid(runs).markdown());
    let failures = failures(runs);
    if !failures.is_empty() {
        lines.push(String::new());
        lines.extend(
            failures
                .iter()
                .map(|f| format!("- **failed**: {}", grid::cell(f))),
        );
    }
    grid::join(&lines)
}

/// CSV: one record per run with its raw figures.
pub fn csv(runs: &[BatchResult]) -> String {
    csv::records(runs, &BatchResult::default(), fields)
}

fn fields(r: &BatchResult) -> csv::Fields {
    let stat = |k: &str, f: fn(&TaskTypeStats) -> f64| json!(r.by_type.get(k).map(f));
    vec![
        ("model", json!(r.model)),
        ("params", json!(params_label(r))),
        ("tasks", json!(r.tasks)),
        ("failed", json!(r.failed)),
        ("total_s", json!(r.total_s)),
        ("cpu_mean_ms", stat("cpu", |s| s.mean_ms)),
        ("cpu_p99_ms", stat("cpu", |s| s.p99_ms)),
        ("io_mean_ms", stat("io", |s| s.mean_ms)),
        ("io_p99_ms", stat("io", |s| s.p99_ms)),
        ("io_wait_mean_ms", stat("io", |s| s.wait_mean_ms)),
        (
            "peak_io_in_service",
            json!(r.counters.get("peak_io_in_service")),
        ),
        ("peak_threads", json!(r.peak_threads)),
        ("peak_rss_mb", json!(r.peak_rss_mb)),
        ("cpu_utilisation", json!(r.cpu_utilisation)),
        ("failure", json!(r.failure)),
    ]
}
