//! One flat row per run: the figures every table and export shows, taken from
//! the record without guessing (a figure that was not measured is `None`).

use std::collections::BTreeMap;

use iolab_model::experiment::Work;
use iolab_model::runs::{Outcome, RunRecord, RunsFile};
use serde::Serialize;

use crate::runs::groups;

/// The flat summary of one run (the `json` and `csv` row).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRow {
    /// Experiment (preset) name.
    pub experiment: String,
    /// Run name.
    pub name: String,
    /// Model.
    pub model: String,
    /// Knobs that were set, e.g. `threads=20`.
    pub params: String,
    /// Sweep coordinates.
    pub coordinates: BTreeMap<String, serde_json::Value>,
    /// `completed`, `start-failed`, ...
    pub outcome: String,
    /// Time-scale the run used (1 = real time).
    pub scale: f64,
    /// Offered rate, req/s (as run).
    pub offered_rps: Option<f64>,
    /// Answered per second.
    pub achieved_rps: Option<f64>,
    /// 2xx within the timeout per second.
    pub goodput_rps: Option<f64>,
    /// 2xx within the timeout / planned.
    pub success_ratio: Option<f64>,
    /// Latency p50, ms (as run).
    pub p50_ms: Option<f64>,
    /// Latency p99, ms.
    pub p99_ms: Option<f64>,
    /// Slowest answer, ms.
    pub max_ms: Option<f64>,
    /// Requests planned.
    pub planned: Option<u64>,
    /// 2xx within the timeout.
    pub ok: Option<u64>,
    /// Answered with another status.
    pub non_2xx: Option<u64>,
    /// Scheduled but never sent.
    pub not_sent: Option<u64>,
    /// Errors: timeout.
    pub err_timeout: Option<u64>,
    /// Errors: connection refused.
    pub err_refused: Option<u64>,
    /// Errors: connection reset.
    pub err_reset: Option<u64>,
    /// Errors: EADDRNOTAVAIL (ephemeral ports).
    pub err_addr_unavailable: Option<u64>,
    /// Errors: other connect failures.
    pub err_connect_other: Option<u64>,
    /// Errors: read failures.
    pub err_read: Option<u64>,
    /// Most OS threads of the target (or batch process).
    pub peak_threads: Option<u64>,
    /// Highest RSS, MiB.
    pub peak_rss_mb: Option<f64>,
    /// CPU seconds the target used.
    pub cpu_s: Option<f64>,
    /// The generator may have been the bottleneck: flagged heavily (its
    /// CPU busy, or its send lag over a quarter of the median latency); a
    /// lighter flag is a caveat, not a mark in the table.
    pub generator_saturated: Option<bool>,
    /// Batch: wall time of the whole batch, s (as run).
    pub total_s: Option<f64>,
    /// Batch: tasks run.
    pub tasks: Option<u64>,
    /// Batch: tasks failed.
    pub failed: Option<u64>,
    /// Predicted success ratio.
    pub predicted_success_ratio: Option<f64>,
    /// Predicted p50, ms.
    pub predicted_p50_ms: Option<f64>,
    /// Predicted p99, ms.
    pub predicted_p99_ms: Option<f64>,
    /// Best of its group (same load): highest goodput, then lowest p99,
    /// each beyond the noise (`iolab_model::noise`).
    pub best: bool,
    /// Tied for best of its group: no run of the tie is better beyond the noise.
    pub tied: bool,
    /// One sentence explaining the outcome from the numbers.
    pub explanation: String,
    /// What could make the numbers wrong, one short line each (often none).
    pub caveats: Vec<String>,
}

/// Column names of the CSV, in order (the fields of [`RunRow`]).
pub const COLUMNS: [&str; 38] = [
    "experiment",
    "name",
    "model",
    "params",
    "coordinates",
    "outcome",
    "scale",
    "offered_rps",
    "achieved_rps",
    "goodput_rps",
    "success_ratio",
    "p50_ms",
    "p99_ms",
    "max_ms",
    "planned",
    "ok",
    "non_2xx",
    "not_sent",
    "err_timeout",
    "err_refused",
    "err_reset",
    "err_addr_unavailable",
    "err_connect_other",
    "err_read",
    "peak_threads",
    "peak_rss_mb",
    "cpu_s",
    "generator_saturated",
    "total_s",
    "tasks",
    "failed",
    "predicted_success_ratio",
    "predicted_p50_ms",
    "predicted_p99_ms",
    "best",
    "tied",
    "explanation",
    "caveats",
];

/// `name(params)` as tables show it, e.g. `pool(threads=20)`: the name is the
/// preset target's `label` when it has one (two targets may share a model, e.g.
/// a JVM and a Rust `loop-async`), else the model.
pub fn label(run: &RunRecord) -> String {
    named(
        &run.coordinates,
        &run.model.to_string(),
        &run.spec.params.label(),
    )
}

fn named(coordinates: &BTreeMap<String, serde_json::Value>, model: &str, params: &str) -> String {
    let name = coordinates
        .get("target")
        .and_then(|v| v.as_str())
        .unwrap_or(model);
    if params.is_empty() {
        name.to_string()
    } else {
        format!("{name}({params})")
    }
}

/// Rows of every run, in file order.
pub fn rows(runs: &RunsFile) -> Vec<RunRow> {
    let gs = groups::groups(runs);
    let best: Vec<usize> = gs.iter().filter_map(|g| g.best).collect();
    let tied: Vec<usize> = gs.iter().flat_map(|g| g.tied.iter().copied()).collect();
    runs.runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut row = row(runs, r, best.contains(&i));
            row.tied = tied.contains(&i);
            row
        })
        .collect()
}

fn row(file: &RunsFile, run: &RunRecord, best: bool) -> RunRow {
    let a = run.attack.as_ref();
    let b = run.batch.as_ref();
    let e = a.map(|a| &a.errors);
    let tel = &run.telemetry;
    let offered = a
        .map(|a| a.throughput_rps.offered)
        .or_else(|| match &run.spec.work {
            Work::Http(h) => h.driver.peak_rate(),
            Work::Batch(_) => None,
        });
    RunRow {
        experiment: file.plan.name.clone(),
        name: run.name.clone(),
        model: run.model.to_string(),
        params: run.spec.params.label(),
        coordinates: run.coordinates.clone(),
        outcome: run.outcome.label().to_string(),
        scale: run.spec.scale,
        offered_rps: offered,
        achieved_rps: a.map(|a| a.throughput_rps.achieved),
        goodput_rps: a.map(|a| a.throughput_rps.goodput),
        success_ratio: a.map(|a| a.success_ratio()),
        p50_ms: a.map(|a| a.latency_ms.p50),
        p99_ms: a.map(|a| a.latency_ms.p99),
        max_ms: a.map(|a| a.latency_ms.max),
        planned: a.map(|a| a.requests.planned),
        ok: a.map(|a| a.requests.ok),
        non_2xx: a.map(|a| a.requests.non_2xx),
        not_sent: a.map(|a| a.requests.not_sent),
        err_timeout: e.map(|e| e.timeout),
        err_refused: e.map(|e| e.refused),
        err_reset: e.map(|e| e.reset),
        err_addr_unavailable: e.map(|e| e.addr_unavailable),
        err_connect_other: e.map(|e| e.connect_other),
        err_read: e.map(|e| e.read),
        peak_threads: tel.peak_threads().or(b.map(|b| b.peak_threads)),
        peak_rss_mb: tel.peak_rss_mb().or(b.map(|b| b.peak_rss_mb)),
        cpu_s: tel.cpu_s(),
        generator_saturated: a.map(|a| a.generator_verdict().saturated),
        total_s: b.map(|b| b.total_s),
        tasks: b.map(|b| b.tasks),
        failed: b.map(|b| b.failed),
        predicted_success_ratio: run.prediction.as_ref().map(|p| p.success_ratio),
        // Batch predictions have a total time, not request latencies.
        predicted_p50_ms: a.and(run.prediction.as_ref()).map(|p| p.latency_ms.p50),
        predicted_p99_ms: a.and(run.prediction.as_ref()).map(|p| p.latency_ms.p99),
        best,
        tied: false,
        explanation: crate::runs::explain_in(file, run),
        caveats: {
            let mut c = crate::caveats(run);
            let i = file.runs.iter().position(|r| std::ptr::eq(r, run));
            c.extend(i.and_then(|i| crate::explain::after_overload(file, i)));
            c
        },
    }
}

impl RunRow {
    /// The label shown in tables (see [`label`]).
    pub fn label(&self) -> String {
        named(&self.coordinates, &self.model, &self.params)
    }
}

/// One line describing how a run ended, e.g.
/// `completed  ok 998/1000  goodput 199.6/s  p50 100.4 ms  p99 102.1 ms`.
pub fn line(r: &RunRecord) -> String {
    let mut s = r.outcome.label().to_string();
    if let Some(a) = &r.attack {
        let q = &a.requests;
        s.push_str(&format!(
            "  ok {}/{}  goodput {:.1}/s  p50 {:.1} ms  p99 {:.1} ms",
            q.ok, q.planned, a.throughput_rps.goodput, a.latency_ms.p50, a.latency_ms.p99
        ));
        let errors = a.errors.total() + q.non_2xx + q.not_sent;
        if errors > 0 {
            let mut parts: Vec<String> = a
                .errors
                .classes()
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(c, n)| format!("{c} {n}"))
                .collect();
            if q.non_2xx > 0 {
                parts.push(format!("non-2xx {}", q.non_2xx));
            }
            if q.not_sent > 0 {
                parts.push(format!("not sent {}", q.not_sent));
            }
            s.push_str(&format!("  ({})", parts.join(", ")));
        }
    }
    if let Some(b) = &r.batch {
        s.push_str(&format!("  {} tasks in {:.2} s", b.tasks, b.total_s));
    }
    if let Some(t) = r.telemetry.peak_threads() {
        s.push_str(&format!("  threads {t}"));
    }
    for short in r.backend_shortfall() {
        s.push_str(&format!("  BACKEND SHORT {short}"));
    }
    match &r.outcome {
        Outcome::StartFailed { detail }
        | Outcome::VerifyFailed { detail }
        | Outcome::TargetDied { detail }
        | Outcome::Skipped { detail } => s.push_str(&format!(": {detail}")),
        Outcome::Completed | Outcome::Interrupted => {}
    }
    s
}
