//! The report's charts, built from a [`RunsFile`] as SVG strings: the HTML
//! page inlines them and `--png` rasterises the very same SVG.

mod batch;
mod held;
pub mod series;
mod service;
mod spectrum;
mod sweep;
pub(crate) mod timeline;
mod waiting;

use iolab_model::runs::{RunRecord, RunsFile};

/// One chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// File-name-safe id, e.g. `success-vs-rate`.
    pub id: String,
    /// Which section of the report it belongs to.
    pub section: Section,
    /// The `<svg>` element.
    pub svg: String,
    /// Data points drawn (every chart has some, or it is not made).
    pub points: usize,
}

/// Report sections that hold charts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Success and latency against the offered rate.
    Sweep,
    /// Latency percentile spectra.
    Spectrum,
    /// Batch total times.
    Batch,
    /// Per-run time series.
    Series,
    /// Thread timelines (who held what).
    Timeline,
    /// Memory against requests waiting.
    Waiting,
    /// Memory and threads against connections held, beside predict's.
    Held,
}

/// Every chart the results support, in report order.
pub fn charts(file: &RunsFile) -> Vec<Chart> {
    let mut out = Vec::new();
    out.extend(sweep::charts(file));
    out.extend(batch::charts(file));
    out.extend(timeline::charts(file));
    out.extend(spectrum::charts(file));
    out.extend(series::charts(file));
    out.extend(service::charts(file));
    out.extend(waiting::charts(file));
    out.extend(held::charts(file));
    out.retain(|c| c.points > 0);
    out
}

/// Make a run name safe for a file name.
pub(crate) fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Palette slots by label, in order of first appearance, so a model keeps its
/// colour in every chart of a report.
pub(crate) fn slots(runs: &[&RunRecord]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for r in runs {
        let l = crate::runs::summary::label(r);
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    labels
}

/// The palette slot of a label.
pub(crate) fn slot_of(labels: &[String], label: &str) -> usize {
    labels.iter().position(|l| l == label).unwrap_or(0)
}
