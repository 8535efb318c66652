//! A foreign service's own series over the run (what its Prometheus endpoint
//! said: Tomcat's busy threads, HikariCP's active connections, gunicorn's
//! workers), one chart per run that scraped any, one line per series, on the
//! same clock as the run's time series. A sample the service did not answer
//! is a gap, never a zero.

use std::collections::BTreeSet;

use iolab_model::runs::{RunRecord, RunsFile};

use super::{slug, Chart, Section};
use crate::numbers::num;
use crate::svg::line::{Axis, LineChart, Point, Series};
use crate::svg::scale::Kind;

/// The names of the service series a run recorded, in name order.
fn names(r: &RunRecord) -> BTreeSet<&str> {
    r.telemetry
        .series
        .iter()
        .flat_map(|p| p.service.keys().map(String::as_str))
        .collect()
}

/// One line per series: its value at every sample that has it.
fn lines(r: &RunRecord) -> Vec<Series> {
    names(r)
        .into_iter()
        .enumerate()
        .map(|(slot, name)| Series {
            name: name.to_string(),
            colour: slot,
            points: r
                .telemetry
                .series
                .iter()
                .filter_map(|p| {
                    let y = *p.service.get(name)?;
                    let tip = format!("{name} at {} s: {}", num(p.t_s, 2), num(y, 1));
                    Some(Point { x: p.t_s, y, tip })
                })
                .collect(),
            dashed: false,
            markers: false,
        })
        .collect()
}

/// A chart per run whose service answered with named series.
pub fn charts(file: &RunsFile) -> Vec<Chart> {
    file.runs
        .iter()
        .filter(|r| !names(r).is_empty())
        .map(|r| {
            let (svg, points) = LineChart {
                title: format!(
                    "The service's own series · {}",
                    crate::runs::summary::label(r)
                ),
                x: Axis::new(Kind::Linear, "time since start (s, as run)"),
                y: Axis::new(Kind::Linear, "value (summed over labels)"),
                series: lines(r),
                width: 560.0,
                height: 220.0,
            }
            .render();
            Chart {
                id: format!("service-{}", slug(&r.name)),
                section: Section::Series,
                svg,
                points,
            }
        })
        .collect()
}
