//! The comparison table as a grid of cells, shared by the terminal,
//! Markdown and HTML renderers: one grid per group of runs under the same
//! load, with batch columns for batches and request columns otherwise.

use iolab_model::batch::TaskTypeStats;
use iolab_model::runs::RunsFile;

use crate::grid::Grid;
use crate::numbers::{count, mib, ms, num, opt, percent, rate};
use crate::runs::groups::Group;
use crate::runs::summary::RunRow;

/// The mark of the best run in its group.
pub const BEST: &str = "★";

/// The line under every table that says what the mark means.
pub const FOOTNOTE: &str =
    "★ best of its load: highest goodput, then lowest p99 (batch: shortest total).";

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

/// The grid of one group.
pub fn grid(file: &RunsFile, rows: &[RunRow], g: &Group) -> Grid {
    let scaled = (file.plan.scale - 1.0).abs() > 1e-12;
    let unscaled = |h: &str| {
        if scaled {
            format!("{h} (unscaled)")
        } else {
            h.to_string()
        }
    };
    let mark = |i: usize| if g.best == Some(i) { BEST } else { "" }.to_string();
    if g.batch {
        batch_grid(file, rows, g, &unscaled, &mark)
    } else {
        http_grid(rows, g, &unscaled, &mark)
    }
}

/// Columns of a batch group: tasks, total and per-type times, resources.
fn batch_grid(
    file: &RunsFile,
    rows: &[RunRow],
    g: &Group,
    unscaled: &dyn Fn(&str) -> String,
    mark: &dyn Fn(usize) -> String,
) -> Grid {
    let header = vec![
        String::new(),
        "run".into(),
        "tasks".into(),
        "failed".into(),
        unscaled("total"),
        unscaled("cpu task"),
        unscaled("io task"),
        unscaled("io wait"),
        "threads".into(),
        "RSS".into(),
        "CPU use".into(),
    ];
    let body = g
        .runs
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
        .collect();
    let mut numeric = vec![true; 11];
    numeric[..2].fill(false);
    Grid {
        header,
        rows: body,
        numeric,
    }
}

/// Columns of an HTTP group: rates, success, latency, errors, resources.
fn http_grid(
    rows: &[RunRow],
    g: &Group,
    unscaled: &dyn Fn(&str) -> String,
    mark: &dyn Fn(usize) -> String,
) -> Grid {
    let header = vec![
        String::new(),
        "run".into(),
        "offered/s".into(),
        "achieved/s".into(),
        "goodput/s".into(),
        "ok".into(),
        unscaled("p50"),
        unscaled("p99"),
        unscaled("max"),
        "errors".into(),
        "threads".into(),
        "RSS".into(),
        "CPU s".into(),
    ];
    let body = g
        .runs
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
        .collect();
    let mut numeric = vec![true; 13];
    numeric[0] = false;
    numeric[1] = false;
    numeric[9] = false;
    Grid {
        header,
        rows: body,
        numeric,
    }
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
