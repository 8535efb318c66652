//! Success ratio, p50 and p99 against the offered rate (or clients), one line
//! per model, predictions dashed beside them.

use iolab_model::experiment::Work;
use iolab_model::runs::{RunRecord, RunsFile};
use iolab_model::Driver;

use super::{slots, Chart, Section};
use crate::numbers::{ms, percent, rate};
use crate::svg::line::{Axis, LineChart, Point, Series};
use crate::svg::scale::Kind;

/// X of a run: the open loop's peak rate, or the closed loop's clients.
fn x_of(r: &RunRecord) -> Option<(f64, bool)> {
    match &r.spec.work {
        Work::Http(h) => match &h.driver {
            Driver::Open { .. } => h.driver.peak_rate().map(|v| (v, true)),
            Driver::Closed { concurrency, .. } => Some((*concurrency as f64, false)),
        },
        Work::Batch(_) => None,
    }
}

pub fn charts(file: &RunsFile) -> Vec<Chart> {
    let runs: Vec<&RunRecord> = file
        .runs
        .iter()
        .filter(|r| r.attack.is_some() && x_of(r).is_some())
        .collect();
    if runs.is_empty() {
        return vec![];
    }
    let open = runs.iter().all(|r| x_of(r).is_some_and(|x| x.1));
    let xlabel = if open {
        "offered rate (req/s, as run)"
    } else {
        "clients (closed loop)"
    };
    let labels = slots(&runs);
    let scaled = (file.plan.scale - 1.0).abs() > 1e-12;
    let note = if scaled {
        format!(" (time-scale {}: as run)", file.plan.scale)
    } else {
        String::new()
    };
    type Get = fn(&RunRecord) -> Option<f64>;
    type GetPred = fn(&iolab_model::predict::Prediction) -> f64;
    let make =
        |id: &str, title: String, y: Axis, get: Get, pred: GetPred, fmt: fn(f64) -> String| {
            let mut series = Vec::new();
            for (slot, l) in labels.iter().enumerate() {
                let mine: Vec<&&RunRecord> = runs
                    .iter()
                    .filter(|r| crate::summary::label(r) == *l)
                    .collect();
                let pts: Vec<Point> = mine
                    .iter()
                    .filter_map(|r| {
                        let x = x_of(r)?.0;
                        let y = get(r)?;
                        Some(Point {
                            x,
                            y,
                            tip: format!("{l} at {}: {}", rate(x), fmt(y)),
                        })
                    })
                    .collect();
                series.push(Series {
                    name: l.clone(),
                    colour: slot,
                    points: pts,
                    dashed: false,
                    markers: true,
                });
                let pp: Vec<Point> = mine
                    .iter()
                    .filter_map(|r| {
                        let p = r.prediction.as_ref()?;
                        let x = x_of(r)?.0;
                        let y = pred(p);
                        let err = get(r)
                            .filter(|m| *m != 0.0)
                            .map(|m| format!(", error {:+.0}%", (y - m) / m * 100.0))
                            .unwrap_or_default();
                        Some(Point {
                            x,
                            y,
                            tip: format!("{l} predicted at {}: {}{err}", rate(x), fmt(y)),
                        })
                    })
                    .collect();
                if !pp.is_empty() {
                    series.push(Series {
                        name: format!("{l} (predicted)"),
                        colour: slot,
                        points: pp,
                        dashed: true,
                        markers: true,
                    });
                }
            }
            let chart = LineChart {
                title,
                x: Axis::new(Kind::Linear, xlabel),
                y,
                series,
                width: 560.0,
                height: 280.0,
            };
            let (svg, points) = chart.render();
            Chart {
                id: id.to_string(),
                section: Section::Sweep,
                svg,
                points,
            }
        };
    vec![
        make(
            "success-vs-rate",
            format!("Success ratio vs load{note}"),
            Axis::new(Kind::Linear, "2xx within timeout / planned (%)").fixed(0.0, 100.0),
            |r| {
                r.attack
                    .as_ref()
                    .filter(|a| a.requests.planned > 0)
                    .map(|a| a.success_ratio() * 100.0)
            },
            |p| p.success_ratio * 100.0,
            |v| percent(v / 100.0),
        ),
        make(
            "p50-vs-rate",
            format!("Median latency (p50) vs load{note}"),
            Axis::new(Kind::Log, "p50 latency (ms, log)"),
            |r| {
                r.attack
                    .as_ref()
                    .map(|a| a.latency_ms.p50)
                    .filter(|v| *v > 0.0)
            },
            |p| p.latency_ms.p50,
            ms,
        ),
        make(
            "p99-vs-rate",
            format!("Tail latency (p99) vs load{note}"),
            Axis::new(Kind::Log, "p99 latency (ms, log)"),
            |r| {
                r.attack
                    .as_ref()
                    .map(|a| a.latency_ms.p99)
                    .filter(|v| *v > 0.0)
            },
            |p| p.latency_ms.p99,
            ms,
        ),
    ]
}
