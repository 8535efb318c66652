//! Thread timelines: for every run that recorded spans, the measured picture
//! and the predicted one (the simulation's same sample) on one time axis.

use iolab_model::runs::{RunRecord, RunsFile};
use iolab_model::spans::{SpanSource, Timeline};

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

fn subtitle(t: &Timeline) -> String {
    let what = match t.source {
        SpanSource::Simulation => "predicted by the simulation",
        SpanSource::Target => "measured on the target",
        SpanSource::Batch => "measured in the batch",
    };
    let mut s = format!(
        "{what}: {} · {} thread{}",
        t.sample.rule.describe(t.sample.size),
        count(t.lanes.len() as u64),
        if t.lanes.len() == 1 { "" } else { "s" }
    );
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
        for (kind, t) in pictures {
            let id = format!("timeline-{}-{kind}", slug(&r.name));
            let (svg, points) = timeline::render(&Picture {
                timeline: t,
                id: &id,
                title: &format!("{title} · {kind}"),
                subtitle: &subtitle(t),
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
