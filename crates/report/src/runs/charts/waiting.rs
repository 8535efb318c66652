//! The cost-of-waiting chart: RSS against the requests each target held, one
//! line per target through its levels (the section's table gives the slopes).

use iolab_model::runs::RunsFile;

use super::{Chart, Section};
use crate::numbers::{count, mib};
use crate::runs::waiting::costs;
use crate::svg::line::{Axis, LineChart, Point, Series};
use crate::svg::scale::Kind;

/// The chart, when some target was measured at two levels or more.
pub fn charts(file: &RunsFile) -> Vec<Chart> {
    let cs = costs(file);
    let series: Vec<Series> = cs
        .iter()
        .enumerate()
        .map(|(slot, c)| Series {
            name: c.label.clone(),
            colour: slot,
            points: c
                .levels
                .iter()
                .map(|l| Point {
                    x: l.in_flight,
                    y: l.rss_mb,
                    tip: format!(
                        "{}: {} held, {} ({} clients)",
                        c.label,
                        count(l.in_flight.round() as u64),
                        mib(l.rss_mb),
                        count(u64::from(l.clients))
                    ),
                })
                .collect(),
            dashed: false,
            markers: true,
        })
        .collect();
    if series.is_empty() {
        return Vec::new();
    }
    let (svg, points) = LineChart {
        title: "Memory against requests waiting".into(),
        x: Axis::new(Kind::Linear, "requests held at once"),
        y: Axis::new(Kind::Linear, "RSS (MiB)"),
        series,
        width: 720.0,
        height: 360.0,
    }
    .render();
    vec![Chart {
        id: "waiting-rss".into(),
        section: Section::Waiting,
        svg,
        points,
    }]
}
