//! The HTML report: one self-contained XHTML-compatible file with inline CSS
//! and inline SVG charts; no font, image or link from anywhere, and no
//! script but the timelines' inline zoom (when the results have timelines).

pub(crate) mod sections;
mod timeline;

use iolab_model::runs::RunsFile;

use crate::runs::charts::{self, Section};
use crate::svg::esc;

pub(crate) const STYLE: &str = include_str!("style.css");

/// Render the page.
pub fn render(file: &RunsFile) -> String {
    let all = charts::charts(file);
    let pick = |s: Section| all.iter().filter(move |c| c.section == s);
    let mut body = String::new();
    body.push_str(&sections::header(file));
    body.push_str(&sections::glance(file));

    let sweep: Vec<_> = pick(Section::Sweep).collect();
    if !sweep.is_empty() {
        body.push_str("<section id=\"sweep\"><h2>Success and latency vs load</h2><p class=\"note\">One line per model; dashed lines with hollow markers are predictions. Hover a point for its value.</p><div class=\"charts\">");
        sweep.iter().for_each(|c| body.push_str(&c.svg));
        body.push_str("</div></section>");
    }
    let batch: Vec<_> = pick(Section::Batch).collect();
    if !batch.is_empty() {
        body.push_str("<section id=\"batch\"><h2>Batch total time</h2><div class=\"charts\">");
        batch.iter().for_each(|c| body.push_str(&c.svg));
        body.push_str("</div></section>");
    }
    let waiting = pick(Section::Waiting).next().map(|c| c.svg.as_str());
    body.push_str(&crate::runs::waiting::render::html(file, waiting));
    let held: Vec<&str> = pick(Section::Held).map(|c| c.svg.as_str()).collect();
    body.push_str(&crate::runs::held::render::html(file, &held));
    body.push_str(&timeline::section(file, pick(Section::Timeline).collect()));
    body.push_str(&sections::predictions(file));
    body.push_str(&sections::published(file));
    body.push_str(&sections::tables(file));
    let spectra: Vec<_> = pick(Section::Spectrum).collect();
    if !spectra.is_empty() {
        body.push_str("<section id=\"spectrum\"><h2>Latency percentile spectrum</h2><p class=\"note\">HdrHistogram style: the x axis stretches the tail (each step right is ten times rarer), latency of answered requests from the intended send time.</p><div class=\"charts\">");
        spectra.iter().for_each(|c| body.push_str(&c.svg));
        body.push_str("</div></section>");
    }
    let series: Vec<_> = pick(Section::Series).collect();
    if !series.is_empty() {
        body.push_str("<section id=\"series\" class=\"series\"><h2>Each run over time</h2><p class=\"note\">One clock for every run (0 = first scheduled send; telemetry before 0 is warm-up), and one y scale per column, so rows compare directly.</p>");
        series.iter().for_each(|c| body.push_str(&c.svg));
        body.push_str("</section>");
    }
    body.push_str(&sections::environment(file));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/><title>iolab · {}</title><style>\n{STYLE}</style></head><body><main>{body}</main></body></html>\n",
        esc(&file.plan.name)
    )
}
