//! Latency percentile spectra, HdrHistogram style (x = 1/(1-p), so the tail
//! gets the room), one chart per load with a line per model.

use iolab_model::runs::{RunRecord, RunsFile};

use super::{slot_of, slots, Chart, Section};
use crate::numbers::{ms, num};
use crate::runs::groups;
use crate::svg::line::{Axis, LineChart, Point, Series};
use crate::svg::scale::Kind;

pub fn charts(file: &RunsFile) -> Vec<Chart> {
    let all: Vec<&RunRecord> = file.runs.iter().filter(|r| r.attack.is_some()).collect();
    let labels = slots(&all);
    let mut out = Vec::new();
    for (gi, g) in groups::groups(file).iter().enumerate() {
        let series: Vec<Series> = g
            .runs
            .iter()
            .map(|&i| &file.runs[i])
            .filter_map(|r| {
                let a = r.attack.as_ref()?;
                let l = crate::runs::summary::label(r);
                let points: Vec<Point> = a
                    .spectrum
                    .iter()
                    .filter(|p| p.percentile < 100.0 && p.latency_ms > 0.0)
                    .map(|p| Point {
                        x: p.percentile,
                        y: p.latency_ms,
                        tip: format!("{l}: p{} = {}", num(p.percentile, 4), ms(p.latency_ms)),
                    })
                    .collect();
                (!points.is_empty()).then(|| Series {
                    name: l.clone(),
                    colour: slot_of(&labels, &l),
                    points,
                    dashed: false,
                    markers: false,
                })
            })
            .collect();
        if series.is_empty() {
            continue;
        }
        let chart = LineChart {
            title: format!("Latency by percentile · {}", g.short),
            x: Axis::new(Kind::Percentile, "percentile (scale 1/(1-p))"),
            y: Axis::new(Kind::Log, "latency (ms, log)"),
            series,
            width: 560.0,
            height: 240.0,
        };
        let (svg, points) = chart.render();
        out.push(Chart {
            id: format!("spectrum-{}", gi + 1),
            section: Section::Spectrum,
            svg,
            points,
        });
    }
    out
}
