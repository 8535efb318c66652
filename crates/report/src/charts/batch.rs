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

pub fn charts(file: &RunsFile) -> Vec<Chart> {
    let done: Vec<&RunRecord> = file
        .runs
        .iter()
        .filter(|r| r.batch.is_some() && r.outcome.is_completed())
        .collect();
    let scaled = (file.plan.scale - 1.0).abs() > 1e-12;
    let ylabel = if scaled {
        format!(
            "total time (s, as run; x{} unscaled)",
            crate::numbers::num(1.0 / file.plan.scale, 2)
        )
    } else {
        "total time (s)".to_string()
    };
    let mut out = Vec::new();

    // E1: one line per worker kind, x = workers.
    let mut kinds: Vec<WorkerKind> = Vec::new();
    for r in &done {
        if let Work::Batch(b) = &r.spec.work {
            if let Some(m) = &b.master {
                if !kinds.contains(&m.worker) {
                    kinds.push(m.worker);
                }
            }
        }
    }
    if !kinds.is_empty() {
        let series = kinds
            .iter()
            .enumerate()
            .map(|(slot, k)| Series {
                name: worker_name(*k).to_string(),
                colour: slot,
                points: done
                    .iter()
                    .filter_map(|r| {
                        let Work::Batch(b) = &r.spec.work else {
                            return None;
                        };
                        let m = b.master.as_ref().filter(|m| m.worker == *k)?;
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
        let chart = LineChart {
            title: "Total time vs workers (E1 scalability)".into(),
            x: Axis::new(Kind::Linear, "workers W"),
            y: Axis::new(Kind::Linear, &ylabel),
            series,
            width: 560.0,
            height: 280.0,
        };
        let (svg, points) = chart.render();
        out.push(Chart {
            id: "batch-time-vs-workers".into(),
            section: Section::Batch,
            svg,
            points,
        });
    }

    // E3: one line per executor, x = calls (log).
    let calls: Vec<&&RunRecord> = done
        .iter()
        .filter(
            |r| matches!(&r.spec.work, Work::Batch(b) if matches!(b.tasks, TaskMix::Calls { .. })),
        )
        .collect();
    if !calls.is_empty() {
        let runs: Vec<&RunRecord> = calls.iter().map(|r| **r).collect();
        let labels = super::slots(&runs);
        // One line per executor, measured (solid) and predicted (dashed).
        let line = |slot: usize, l: &String, predicted: bool| Series {
            name: if predicted {
                format!("{l} (predicted)")
            } else {
                l.clone()
            },
            colour: slot,
            points: runs
                .iter()
                .filter(|r| crate::summary::label(r) == *l)
                .filter_map(|r| {
                    let Work::Batch(b) = &r.spec.work else {
                        return None;
                    };
                    let TaskMix::Calls { n, .. } = b.tasks else {
                        return None;
                    };
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
        let chart = LineChart {
            title: "Total time vs number of calls (E3)".into(),
            x: Axis::new(Kind::Log, "calls (log)"),
            y: Axis::new(Kind::Log, &format!("{ylabel}, log")),
            series,
            width: 560.0,
            height: 280.0,
        };
        let (svg, points) = chart.render();
        out.push(Chart {
            id: "batch-time-vs-calls".into(),
            section: Section::Batch,
            svg,
            points,
        });
    }
    out
}
