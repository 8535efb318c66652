//! The comparison table as a grid of cells, shared by the terminal,
//! Markdown and HTML renderers: one grid per group of runs under the same
//! load, with batch columns for batches and request columns otherwise.

use iolab_model::batch::TaskTypeStats;
use iolab_model::runs::RunsFile;

use crate::grid::Grid;
use crate::numbers::{count, mib, ms, num, opt, percent, rate};
use crate::runs::groups::Group;
use crate::runs::summary::RunRow;

/// The line under every table that says what the marks mean.
pub const FOOTNOTE: &str = "★ best of its load: highest goodput, then lowest p99, each beyond the noise (goodput ±2·√ok over its window, p99 ±2·√(n·0.99·0.01) ranks of its spectrum, half the repetitions' range when larger); = tied for best within it (batch: shortest total, beyond one task's mean time).";

/// A time as run, and unscaled in brackets when the run was scaled.
fn scaled_ms(v: Option<f64>, scale: f64) -> String {
    match v {
        None => "-".into(),
        Some(v) if (scale - 1.0).abs() > 1e-12 => format!("{} ({})", ms(v), ms(v / scale)),
        Some(v) => ms(v),
    }
}

fn errors(r: &RunRow) -> String {
    let classes = [
        ("timeout", r.err_timeout),
        ("refused", r.err_refused),
        ("reset", r.err_reset),
        ("addr_unavailable", r.err_addr_unavailable),
        ("connect_other", r.err_connect_other),
        ("read", r.err_read),
        ("non_2xx", r.non_2xx),
        ("not_sent", r.not_sent),
    ];
    let parts: Vec<String> = classes
        .iter()
        .filter_map(|(k, v)| v.filter(|v| *v > 0).map(|v| format!("{k} {}", count(v))))
        .collect();
    if r.planned.is_none() {
        "-".into()
    } else if parts.is_empty() {
        "0".into()
    } else {
        parts.join(", ")
    }
}

/// A column of a group's table.
struct Column {
    title: &'static str,
    /// Its cells are times, shown as run and unscaled when the plan is scaled.
    time: bool,
    /// Its cells are numbers (aligned right).
    numeric: bool,
}

const fn col(title: &'static str, time: bool, numeric: bool) -> Column {
    Column {
        title,
        time,
        numeric,
    }
}

/// Batch groups: tasks, total and per-type times, resources.
const BATCH: [Column; 11] = [
    col("", false, false),
    col("run", false, false),
    col("tasks", false, true),
    col("failed", false, true),
    col("total", true, true),
    col("cpu task", true, true),
    col("io task", true, true),
    col("io wait", true, true),
    col("threads", false, true),
    col("RSS", false, true),
    col("CPU use", false, true),
];

/// HTTP groups: rates, success, latency, errors, resources.
const HTTP: [Column; 13] = [
    col("", false, false),
    col("run", false, false),
    col("offered/s", false, true),
    col("achieved/s", false, true),
    col("goodput/s", false, true),
    col("ok", false, true),
    col("p50", true, true),
    col("p99", true, true),
    col("max", true, true),
    col("errors", false, false),
    col("threads", false, true),
    col("RSS", false, true),
    col("CPU s", false, true),
];

/// The grid of one group.
pub fn grid(file: &RunsFile, rows: &[RunRow], g: &Group) -> Grid {
    let scaled = (file.plan.scale - 1.0).abs() > 1e-12;
    let mark = |i: usize| g.mark(i).to_string();
    let (columns, body): (&[Column], _) = if g.batch {
        (&BATCH, batch_rows(file, rows, g, &mark))
    } else {
        (&HTTP, http_rows(rows, g, &mark))
    };
    let title = |c: &Column| {
        if c.time && scaled {
            format!("{} (unscaled)", c.title)
        } else {
            c.title.to_string()
        }
    };
    Grid {
        header: columns.iter().map(title).collect(),
        rows: body,
        numeric: columns.iter().map(|c| c.numeric).collect(),
    }
}

/// The cells of a batch group, one row per run, in [`BATCH`]'s order.
fn batch_rows(
    file: &RunsFile,
    rows: &[RunRow],
    g: &Group,
    mark: &dyn Fn(usize) -> String,
) -> Vec<Vec<String>> {
    g.runs
        .iter()
        .map(|&i| {
            let r = &rows[i];
            let run = &file.runs[i];
            let b = run.batch.as_ref();
            let by = |k: &str, f: fn(&TaskTypeStats) -> f64| {
                scaled_ms(b.and_then(|b| b.by_type.get(k)).map(f), r.scale)
            };
            let status = if run.outcome.is_completed() {
                String::new()
            } else {
                format!(" [{}]", r.outcome)
            };
            vec![
                mark(i),
                format!("{}{status}", r.label()),
                opt(r.tasks, count),
                opt(r.failed, count),
                scaled_ms(r.total_s.map(|s| s * 1e3), r.scale),
                by("cpu", |t| t.mean_ms),
                by("io", |t| t.mean_ms),
                by("io", |t| t.wait_mean_ms),
                opt(r.peak_threads, count),
                opt(r.peak_rss_mb, mib),
                opt(b.map(|b| b.cpu_utilisation), percent),
            ]
        })
        .collect()
}

/// The cells of an HTTP group, one row per run, in [`HTTP`]'s order.
fn http_rows(rows: &[RunRow], g: &Group, mark: &dyn Fn(usize) -> String) -> Vec<Vec<String>> {
    g.runs
        .iter()
        .map(|&i| {
            let r = &rows[i];
            let mut status = String::new();
            if r.outcome != "completed" {
                status = format!(" [{}]", r.outcome);
            }
            if r.generator_saturated == Some(true) {
                status += " [generator saturated]";
            }
            vec![
                mark(i),
                format!("{}{status}", r.label()),
                opt(r.offered_rps, rate),
                opt(r.achieved_rps, rate),
                opt(r.goodput_rps, rate),
                opt(r.success_ratio, percent),
                scaled_ms(r.p50_ms, r.scale),
                scaled_ms(r.p99_ms, r.scale),
                scaled_ms(r.max_ms, r.scale),
                errors(r),
                opt(r.peak_threads, count),
                opt(r.peak_rss_mb, mib),
                opt(r.cpu_s, |c| num(c, 2)),
            ]
        })
        .collect()
}

/// The first lines of a report: what ran, where, at what scale.
pub fn preamble(file: &RunsFile) -> Vec<String> {
    let p = &file.plan;
    let mut lines = vec![format!("{} — {}", p.name, p.description)];
    let mut facts = vec![format!("{} runs", file.runs.len())];
    if (p.scale - 1.0).abs() > 1e-12 {
        facts.push(format!(
            "time-scale {} (times as run; unscaled = as run / {})",
            num(p.scale, 4),
            num(p.scale, 4)
        ));
    }
    if p.reps > 1 {
        facts.push(format!("{} repetitions (median shown)", p.reps));
    }
    facts.push(format!(
        "{} cores, {}",
        file.environment.cores, file.environment.cpu_model
    ));
    facts.push(format!("started {}", file.started_utc));
    if !file.complete {
        facts.push("INCOMPLETE: interrupted before every run finished".into());
    }
    lines.push(facts.join(" · "));
    lines
}
