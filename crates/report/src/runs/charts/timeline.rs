//! Thread timelines: for every run that recorded spans, the measured picture
//! and the predicted one (the simulation's same sample) on one time axis.

use iolab_model::experiment::Work;
use iolab_model::runs::{RunRecord, RunsFile};
use iolab_model::spans::{SampleRule, SpanSource, Timeline};

use super::{slug, Chart, Section};
use crate::numbers::count;
use crate::runs::timeline::{self, Picture};

/// The runs that have a timeline (measured, predicted or both), in file order.
pub fn runs(file: &RunsFile) -> impl Iterator<Item = (usize, &RunRecord)> {
    file.runs.iter().enumerate().filter(|(_, r)| {
        r.spans
            .as_ref()
            .is_some_and(|s| s.measured.is_some() || s.predicted.is_some())
    })
}

/// "pool(threads=20) · rate=400": the model and where in the sweep.
pub fn title(r: &RunRecord) -> String {
    let at: Vec<String> = r
        .coordinates
        .iter()
        .filter(|(k, _)| *k != "model" && *k != "target")
        .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), str::to_string)))
        .collect();
    let label = crate::runs::summary::label(r);
    if at.is_empty() {
        label
    } else {
        format!("{label} · {}", at.join(", "))
    }
}

/// One line that fits the chart's width: who recorded it, which sample
/// (`unit`: "requests" or "tasks"), and how many threads held some of it.
fn subtitle(t: &Timeline, unit: &str) -> String {
    let what = match t.source {
        SpanSource::Simulation => "predicted by the simulation",
        SpanSource::Target => "measured on the target",
        SpanSource::Batch => "measured in the batch",
    };
    // The lanes are the threads that held some of the sample, not all the
    // process has: an event loop whose waits hold none draws no lane.
    let held = match t.lanes.len() {
        0 => "no thread held".to_string(),
        1 => "1 thread held".to_string(),
        n => format!("{} threads held", count(n as u64)),
    };
    let which = match t.sample.rule {
        SampleRule::First => format!("the first {} {unit}", count(u64::from(t.sample.size))),
    };
    let mut s = format!("{what}: {which} · {held}");
    if t.sample.taken < t.sample.size {
        s.push_str(&format!(" · {} came", count(u64::from(t.sample.taken))));
    }
    if t.sample.lost > 0 {
        s.push_str(&format!(" · {} spans lost", count(t.sample.lost)));
    }
    s
}

/// The charts: two per run (measured, predicted) where both exist.
pub fn charts(file: &RunsFile) -> Vec<Chart> {
    let mut out = Vec::new();
    for (i, r) in runs(file) {
        let spans = r.spans.as_ref().expect("filtered");
        let pictures: Vec<(&str, &Timeline)> = [
            ("measured", spans.measured.as_ref()),
            ("predicted", spans.predicted.as_ref()),
        ]
        .into_iter()
        .filter_map(|(k, t)| t.map(|t| (k, t)))
        .collect();
        let end = pictures.iter().map(|(_, t)| t.end_ms()).fold(0.0, f64::max);
        let end = timeline::nice_end(end);
        let (title, group) = (title(r), format!("tl-{}", i + 1));
        let unit = match r.spec.work {
            Work::Batch(_) => "tasks",
            Work::Http(_) => "requests",
        };
        for (kind, t) in pictures {
            let id = format!("timeline-{}-{kind}", slug(&r.name));
            let (svg, points) = timeline::render(&Picture {
                timeline: t,
                id: &id,
                title: &format!("{title} · {kind}"),
                subtitle: &subtitle(t, unit),
                end_ms: end,
                group: &group,
            });
            out.push(Chart {
                id,
                section: Section::Timeline,
                svg,
                points,
            });
        }
    }
    out
}
