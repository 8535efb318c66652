//! A capacity search's charts: success and p99 against the offered rate,
//! the measured steps (solid) beside each model's simulated curve
//! (dashed), the sweep's throughput against clients when there is one, and
//! for a replayed mix each endpoint's p99 against the rate (issue 53: which
//! endpoint's latency gives out first, seen on one chart).

use iolab_model::capacity::{Search, StepRecord};

use super::{answered_latency, step_line};
use crate::numbers::rate;
use crate::svg::line::{Axis, LineChart, Point, Series};
use crate::svg::scale::Kind;

/// A chart of one figure against the offered rate: the measured steps
/// (solid), each model's simulation (dashed).
fn chart(
    s: &Search,
    title: &str,
    y: Axis,
    measured: fn(&StepRecord) -> Option<f64>,
    sim: fn(&iolab_model::capacity::WhatIfPoint) -> f64,
) -> String {
    let mut steps: Vec<&StepRecord> = s.steps.iter().collect();
    steps.sort_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps));
    let mut series = vec![Series {
        name: format!("{} (measured)", s.name),
        colour: 0,
        points: steps
            .iter()
            .filter_map(|st| {
                measured(st).map(|y| Point {
                    x: st.rate_rps,
                    y,
                    tip: step_line(st),
                })
            })
            .collect(),
        dashed: false,
        markers: true,
    }];
    // A change that cannot be said has no curve to draw.
    let said = s.what_if.iter().filter(|w| w.cannot_say.is_none());
    for (i, w) in said.enumerate() {
        series.push(Series {
            name: format!("{} ({})", w.change, w.label),
            colour: i + 1,
            points: w
                .points
                .iter()
                .map(|p| Point {
                    x: p.rate_rps,
                    y: sim(p),
                    tip: format!("{} at {}/s", w.label, rate(p.rate_rps)),
                })
                .collect(),
            dashed: true,
            markers: true,
        });
        // A solid, empty twin puts the model's name in the legend.
        series.push(Series {
            name: format!("{} ({})", w.change, w.label),
            colour: i + 1,
            points: Vec::new(),
            dashed: false,
            markers: false,
        });
    }
    LineChart {
        title: title.into(),
        x: Axis::new(Kind::Log, "offered rate (req/s)"),
        y,
        series,
        width: 560.0,
        height: 260.0,
    }
    .render()
    .0
}

/// The two charts of one search, as (file-name-safe id, `<svg>`): drawn in
/// the HTML page, and by `iolab report --png`.
pub fn charts(s: &Search) -> Vec<(String, String)> {
    let slug: String = s
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let sweep = s.sweep.as_ref().and_then(|sw| {
        crate::usl::chart(&s.name, sw).map(|svg| (format!("{slug}-throughput-vs-clients"), svg))
    });
    let mut out = vec![
        (
            format!("{slug}-p99-vs-rate"),
            chart(
                s,
                "p99 latency vs offered rate",
                Axis::new(Kind::Log, "p99 (ms)"),
                |st| answered_latency(st, st.p99_ms).map(|v| v.max(0.01)),
                |p| p.p99_ms.max(0.01),
            ),
        ),
        (
            format!("{slug}-success-vs-rate"),
            chart(
                s,
                "success vs offered rate",
                Axis::new(Kind::Linear, "success (%)").fixed(0.0, 100.0),
                |st| Some(st.success_ratio * 100.0),
                |p| p.success_ratio * 100.0,
            ),
        ),
    ];
    out.extend(sweep);
    out.extend(per_endpoint(s).map(|svg| (format!("{slug}-p99-per-endpoint-vs-rate"), svg)));
    out
}

/// A replayed mix's endpoints, one p99 curve each against the offered
/// rate, from every step's own endpoint results (`None` with fewer than
/// two endpoints: nothing to tell apart).
fn per_endpoint(s: &Search) -> Option<String> {
    let mut steps: Vec<&StepRecord> = s.steps.iter().collect();
    steps.sort_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps));
    let mut names: Vec<(String, String)> = Vec::new();
    for e in steps.iter().flat_map(|st| &st.attack.endpoints) {
        let key = (e.method.clone(), e.template.clone());
        if !names.contains(&key) {
            names.push(key);
        }
    }
    if names.len() < 2 {
        return None;
    }
    let series = (names.iter().enumerate())
        .map(|(i, (method, template))| Series {
            name: format!("{method} {template}"),
            colour: i,
            points: (steps.iter())
                .filter_map(|st| {
                    let e = (st.attack.endpoints.iter())
                        .find(|e| &e.method == method && &e.template == template)?;
                    (e.ok + e.non_2xx > 0).then(|| Point {
                        x: st.rate_rps,
                        y: e.latency_ms.p99.max(0.01),
                        tip: format!(
                            "{method} {template} at {}/s: p99 {:.1} ms of {} answered",
                            rate(st.rate_rps),
                            e.latency_ms.p99,
                            e.ok + e.non_2xx
                        ),
                    })
                })
                .collect(),
            dashed: false,
            markers: true,
        })
        .collect();
    let chart = LineChart {
        title: "p99 latency per endpoint vs offered rate".into(),
        x: Axis::new(Kind::Log, "offered rate (req/s)"),
        y: Axis::new(Kind::Log, "p99 (ms)"),
        series,
        width: 560.0,
        height: 260.0,
    };
    Some(chart.render().0)
}
