//! The cost-of-a-held-connection charts: RSS and threads against the
//! connections each target was asked to hold, one solid line per target
//! through its levels and, dashed beside it, what `predict` said.
//!
//! `predict` gives a cost per held connection and where the model stops, not
//! the target's idle size, so the predicted line starts at the target's own
//! first level and climbs by the predicted cost for every connection it is
//! predicted to hold (a pool of 200 threads holds 200 whatever is asked):
//! the two lines part where the measured cost or stop differs from the
//! predicted one.

use iolab_model::runs::RunsFile;

use super::{Chart, Section};
use crate::numbers::{count, mib, num};
use crate::runs::held::{costs, HeldCost, Level};
use crate::svg::line::{Axis, LineChart, Point, Series};
use crate::svg::scale::Kind;

/// One quantity drawn against the connections asked.
struct Quantity {
    id: &'static str,
    title: &'static str,
    y: &'static str,
    /// The level's measured value.
    measured: fn(&Level) -> Option<f64>,
    /// The predicted cost per held connection, in the y axis' unit.
    per: fn(&HeldCost) -> Option<f64>,
    /// A value as the tooltip says it.
    say: fn(f64) -> String,
}

const QUANTITIES: [Quantity; 2] = [
    Quantity {
        id: "held-rss",
        title: "Memory against connections held, predicted dashed",
        y: "RSS (MiB)",
        measured: |l| l.rss_mb,
        per: |c| c.predicted.as_ref().map(|p| p.kib_per_connection / 1024.0),
        say: mib,
    },
    Quantity {
        id: "held-threads",
        title: "Threads against connections held, predicted dashed",
        y: "threads",
        measured: |l| l.threads,
        per: |c| c.predicted.as_ref().map(|p| p.threads_per_connection),
        say: |v| num(v, 0),
    },
];

/// Both charts, when some target was measured at two levels or more.
pub fn charts(file: &RunsFile) -> Vec<Chart> {
    let cs = costs(file);
    if !cs.iter().any(|c| c.levels.len() > 1) {
        return Vec::new();
    }
    QUANTITIES.iter().map(|q| chart(&cs, q)).collect()
}

fn chart(cs: &[HeldCost], q: &Quantity) -> Chart {
    let mut series = Vec::new();
    for (slot, c) in cs.iter().enumerate() {
        let measured: Vec<Point> = (c.levels.iter())
            .filter_map(|l| {
                let y = (q.measured)(l)?;
                Some(Point {
                    x: l.asked as f64,
                    y,
                    tip: format!(
                        "{}: {} of {} held, {}",
                        c.label,
                        count(l.established),
                        count(l.asked),
                        (q.say)(y)
                    ),
                })
            })
            .collect();
        let predicted = predicted(c, q);
        series.push(Series {
            name: c.label.clone(),
            colour: slot,
            points: measured,
            dashed: false,
            markers: true,
        });
        if !predicted.is_empty() {
            series.push(Series {
                name: format!("{} (predicted)", c.label),
                colour: slot,
                points: predicted,
                dashed: true,
                markers: true,
            });
        }
    }
    let points = series.iter().map(|s| s.points.len()).sum();
    let (svg, _) = LineChart {
        title: q.title.into(),
        x: Axis::new(Kind::Linear, "connections asked to hold"),
        y: Axis::new(Kind::Linear, q.y),
        series,
        width: 720.0,
        height: 360.0,
    }
    .render();
    Chart {
        id: q.id.into(),
        section: Section::Held,
        svg,
        points,
    }
}

/// The predicted line: from the first measured level, the predicted cost
/// for each connection the model is predicted to hold beyond it.
fn predicted(c: &HeldCost, q: &Quantity) -> Vec<Point> {
    let (Some(per), Some((first, y0))) = (
        (q.per)(c),
        (c.levels.iter()).find_map(|l| Some((l, (q.measured)(l)?))),
    ) else {
        return Vec::new();
    };
    let holds = |asked: u64| c.predicted_stop.0.map_or(asked, |s| asked.min(s)) as f64;
    (c.levels.iter())
        .map(|l| {
            let y = y0 + per * (holds(l.asked) - holds(first.asked));
            Point {
                x: l.asked as f64,
                y,
                tip: format!(
                    "{} predicted: {} of {} held, {}",
                    c.label,
                    count(holds(l.asked) as u64),
                    count(l.asked),
                    (q.say)(y)
                ),
            }
        })
        .collect()
}
