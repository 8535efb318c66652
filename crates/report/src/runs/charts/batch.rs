//! Batch figures: total time vs workers (E1's scalability graph) and total
//! time vs number of calls on log axes (E3's figure).

use iolab_model::batch::{TaskMix, WorkerKind};
use iolab_model::experiment::Work;
use iolab_model::runs::{RunRecord, RunsFile};

use super::{Chart, Section};
use crate::numbers::{count, secs};
use crate::svg::line::{Axis, LineChart, Point, Series};
use crate::svg::scale::Kind;

fn worker_name(k: WorkerKind) -> &'static str {
    match k {
        WorkerKind::Blocking => "blocking workers",
        WorkerKind::SharedPool => "shared-pool workers",
        WorkerKind::Timer => "timer workers",
    }
}

fn tip(r: &RunRecord, total: f64) -> String {
    let scale = r.spec.scale;
    if (scale - 1.0).abs() > 1e-12 {
        format!(
            "{}: {} ({} unscaled)",
            r.name,
            secs(total),
            secs(total / scale)
        )
    } else {
        format!("{}: {}", r.name, secs(total))
    }
}

/// The batch charts the results support: E1's and E3's, in that order.
pub fn charts(file: &RunsFile) -> Vec<Chart> {
    let done: Vec<&RunRecord> = file
        .runs
        .iter()
        .filter(|r| r.batch.is_some() && r.outcome.is_completed())
        .collect();
    let ylabel = ylabel(file);
    [by_workers(&done, &ylabel), by_calls(&done, &ylabel)]
        .into_iter()
        .flatten()
        .collect()
}

/// The y axis: total time as run, with the factor back to unscaled time.
fn ylabel(file: &RunsFile) -> String {
    if (file.plan.scale - 1.0).abs() > 1e-12 {
        format!(
            "total time (s, as run; x{} unscaled)",
            crate::numbers::num(1.0 / file.plan.scale, 2)
        )
    } else {
        "total time (s)".to_string()
    }
}

/// A 560 x 280 line chart of the batch section.
fn chart(id: &str, title: &str, x: Axis, y: Axis, series: Vec<Series>) -> Chart {
    let (svg, points) = LineChart {
        title: title.into(),
        x,
        y,
        series,
        width: 560.0,
        height: 280.0,
    }
    .render();
    Chart {
        id: id.into(),
        section: Section::Batch,
        svg,
        points,
    }
}

/// E1: total time vs workers, one line per worker kind.
fn by_workers(done: &[&RunRecord], ylabel: &str) -> Option<Chart> {
    let master = |r: &RunRecord| match &r.spec.work {
        Work::Batch(b) => b.master.clone(),
        Work::Http(_) => None,
    };
    let mut kinds: Vec<WorkerKind> = Vec::new();
    for m in done.iter().filter_map(|r| master(r)) {
        if !kinds.contains(&m.worker) {
            kinds.push(m.worker);
        }
    }
    if kinds.is_empty() {
        return None;
    }
    let series = kinds
        .iter()
        .enumerate()
        .map(|(slot, k)| Series {
            name: worker_name(*k).to_string(),
            colour: slot,
            points: done
                .iter()
                .filter_map(|r| {
                    let m = master(r).filter(|m| m.worker == *k)?;
                    let t = r.batch.as_ref()?.total_s;
                    Some(Point {
                        x: m.workers as f64,
                        y: t,
                        tip: tip(r, t),
                    })
                })
                .collect(),
            dashed: false,
            markers: true,
        })
        .collect();
    Some(chart(
        "batch-time-vs-workers",
        "Total time vs workers (E1 scalability)",
        Axis::new(Kind::Linear, "workers W"),
        Axis::new(Kind::Linear, ylabel),
        series,
    ))
}

/// The number of calls of an E3 run.
fn calls_of(r: &RunRecord) -> Option<u64> {
    match &r.spec.work {
        Work::Batch(b) => match b.tasks {
            TaskMix::Calls { n, .. } => Some(n),
            TaskMix::Mixed { .. } => None,
        },
        Work::Http(_) => None,
    }
}

/// E3: total time vs calls on log axes, one line per executor, measured
/// (solid) and predicted (dashed).
fn by_calls(done: &[&RunRecord], ylabel: &str) -> Option<Chart> {
    let runs: Vec<&RunRecord> = done
        .iter()
        .copied()
        .filter(|r| calls_of(r).is_some())
        .collect();
    if runs.is_empty() {
        return None;
    }
    let labels = super::slots(&runs);
    let line = |slot: usize, l: &String, predicted: bool| Series {
        name: if predicted {
            format!("{l} (predicted)")
        } else {
            l.clone()
        },
        colour: slot,
        points: runs
            .iter()
            .filter(|r| crate::runs::summary::label(r) == *l)
            .filter_map(|r| {
                let n = calls_of(r)?;
                let (t, what) = if predicted {
                    (r.prediction.as_ref()?.total_s?, " predicted")
                } else {
                    (r.batch.as_ref()?.total_s, "")
                };
                Some(Point {
                    x: n as f64,
                    y: t,
                    tip: format!("{} calls{what}: {}", count(n), tip(r, t)),
                })
            })
            .collect(),
        dashed: predicted,
        markers: true,
    };
    let series = [false, true]
        .into_iter()
        .flat_map(|predicted| {
            labels
                .iter()
                .enumerate()
                .map(move |(slot, l)| (slot, l, predicted))
        })
        .map(|(slot, l, predicted)| line(slot, l, predicted))
        .collect();
    Some(chart(
        "batch-time-vs-calls",
        "Total time vs number of calls (E3)",
        Axis::new(Kind::Log, "calls (log)"),
        Axis::new(Kind::Log, &format!("{ylabel}, log")),
        series,
    ))
}
