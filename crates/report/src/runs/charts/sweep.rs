//! Success ratio, p50 and p99 against the offered rate (or clients), one line
//! per model, predictions dashed beside them.

use iolab_model::attack::LatencySummary;
use iolab_model::experiment::Work;
use iolab_model::predict::Prediction;
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

/// One figure of the sweep: what is drawn on y, measured and predicted.
struct Metric {
    id: &'static str,
    title: &'static str,
    y: Axis,
    /// The measured value of a run, if it has one to draw.
    get: fn(&RunRecord) -> Option<f64>,
    /// The predicted value.
    pred: fn(&Prediction) -> f64,
    /// How a value reads in a tooltip.
    fmt: fn(f64) -> String,
}

/// The three metrics, in report order.
fn metrics() -> [Metric; 3] {
    [
        Metric {
            id: "success-vs-rate",
            title: "Success ratio vs load",
            y: Axis::new(Kind::Linear, "2xx within timeout / planned (%)").fixed(0.0, 100.0),
            get: |r| {
                r.attack
                    .as_ref()
                    .filter(|a| a.requests.planned > 0)
                    .map(|a| a.success_ratio() * 100.0)
            },
            pred: |p| p.success_ratio * 100.0,
            fmt: |v| percent(v / 100.0),
        },
        Metric {
            id: "p50-vs-rate",
            title: "Median latency (p50) vs load",
            y: Axis::new(Kind::Log, "p50 latency (ms, log)"),
            get: |r| latency(r, |l| l.p50),
            pred: |p| p.latency_ms.p50,
            fmt: ms,
        },
        Metric {
            id: "p99-vs-rate",
            title: "Tail latency (p99) vs load",
            y: Axis::new(Kind::Log, "p99 latency (ms, log)"),
            get: |r| latency(r, |l| l.p99),
            pred: |p| p.latency_ms.p99,
            fmt: ms,
        },
    ]
}

/// A latency of a run's load, when it has one (0 means no request answered:
/// nothing to draw on a log axis).
fn latency(r: &RunRecord, pick: fn(&LatencySummary) -> f64) -> Option<f64> {
    r.attack
        .as_ref()
        .map(|a| pick(&a.latency_ms))
        .filter(|v| *v > 0.0)
}

/// The measured line of one label, and its predicted line when there is one.
fn lines(m: &Metric, mine: &[&RunRecord], l: &str, slot: usize) -> Vec<Series> {
    let measured = mine
        .iter()
        .filter_map(|r| {
            let (x, y) = (x_of(r)?.0, (m.get)(r)?);
            let tip = format!("{l} at {}: {}", rate(x), (m.fmt)(y));
            Some(Point { x, y, tip })
        })
        .collect();
    let predicted: Vec<Point> = mine
        .iter()
        .filter_map(|r| {
            let (x, y) = (x_of(r)?.0, (m.pred)(r.prediction.as_ref()?));
            let err = (m.get)(r)
                .filter(|v| *v != 0.0)
                .map(|v| format!(", error {:+.0}%", (y - v) / v * 100.0))
                .unwrap_or_default();
            let tip = format!("{l} predicted at {}: {}{err}", rate(x), (m.fmt)(y));
            Some(Point { x, y, tip })
        })
        .collect();
    let line = |name: String, points: Vec<Point>, dashed: bool| Series {
        name,
        colour: slot,
        points,
        dashed,
        markers: true,
    };
    let mut out = vec![line(l.to_string(), measured, false)];
    if !predicted.is_empty() {
        out.push(line(format!("{l} (predicted)"), predicted, true));
    }
    out
}

/// Success, p50 and p99 against the load, when the results have HTTP runs.
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
    let note = if (file.plan.scale - 1.0).abs() > 1e-12 {
        format!(" (time-scale {}: as run)", file.plan.scale)
    } else {
        String::new()
    };
    let chart = |m: Metric| {
        let mut series = Vec::new();
        for (slot, l) in labels.iter().enumerate() {
            let mine: Vec<&RunRecord> = runs
                .iter()
                .copied()
                .filter(|r| crate::runs::summary::label(r) == *l)
                .collect();
            series.extend(lines(&m, &mine, l, slot));
        }
        let (svg, points) = LineChart {
            title: format!("{}{note}", m.title),
            x: Axis::new(Kind::Linear, xlabel),
            y: m.y,
            series,
            width: 560.0,
            height: 280.0,
        }
        .render();
        Chart {
            id: m.id.to_string(),
            section: Section::Sweep,
            svg,
            points,
        }
    };
    metrics().into_iter().map(chart).collect()
}
