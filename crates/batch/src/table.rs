//! A terminal table of batch results: one row per run, failures listed below.

use std::fmt::Write;

use iolab_model::batch::{BatchResult, TaskTypeStats};
use serde_json::Value;

/// Knobs shown in the `params` column, in this order (the seed and the task
/// counts are the same for every row of a sweep and stay in the JSON).
const SHOWN: [&str; 11] = [
    "calls",
    "ms",
    "threads",
    "workers",
    "worker",
    "shared_pool",
    "offload",
    "max_threads",
    "loop_threads",
    "scale",
    "seed",
];

/// Render `runs` as an aligned table.
pub fn render(runs: &[BatchResult]) -> String {
    let header = [
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
        "rss MiB",
        "cpu util",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in runs {
        let cpu = r.by_type.get("cpu");
        let io = r.by_type.get("io");
        let stat = |s: Option<&TaskTypeStats>, f: fn(&TaskTypeStats) -> f64| {
            s.map_or("-".into(), |s| fmt_ms(f(s)))
        };
        rows.push(vec![
            r.model.map_or("-".into(), |m| m.to_string()),
            params_label(r),
            r.tasks.to_string(),
            r.failed.to_string(),
            fmt_ms(r.total_s * 1e3),
            stat(cpu, |s| s.mean_ms),
            stat(cpu, |s| s.p99_ms),
            stat(io, |s| s.mean_ms),
            stat(io, |s| s.p99_ms),
            stat(io, |s| s.wait_mean_ms),
            r.counters
                .get("peak_io_in_service")
                .map_or("-".into(), |v| format!("{v:.0}")),
            r.peak_threads.to_string(),
            format!("{:.1}", r.peak_rss_mb),
            format!("{:.0}%", r.cpu_utilisation * 100.0),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            // Text columns left-aligned, numbers right-aligned.
            if c < 2 {
                let _ = write!(line, "{cell:<w$}  ", w = widths[c]);
            } else {
                let _ = write!(line, "{cell:>w$}  ", w = widths[c]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for r in runs.iter().filter(|r| r.failure.is_some()) {
        let _ = writeln!(
            out,
            "! {} {}: {}",
            r.model.map_or("-".into(), |m| m.to_string()),
            params_label(r),
            r.failure.as_deref().unwrap_or_default()
        );
    }
    out
}

/// `calls=100 ms=1000 threads=8`, from the knobs in [`SHOWN`].
pub fn params_label(r: &BatchResult) -> String {
    SHOWN
        .iter()
        .filter_map(|k| {
            r.params.get(*k).map(|v| match v {
                Value::String(s) => format!("{k}={s}"),
                v => format!("{k}={v}"),
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `52.3ms` below a second, `13.057s` above.
fn fmt_ms(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{ms:.1}ms")
    } else {
        format!("{:.3}s", ms / 1e3)
    }
}
