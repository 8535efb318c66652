//! The "Threads over time" section: each run's measured and predicted
//! timelines side by side, what its sample is, why a measurement is missing,
//! and the inline script that zooms them (only on a page that has them).

use iolab_model::runs::RunsFile;

use crate::runs::charts::timeline::{runs, title};
use crate::runs::charts::Chart;
use crate::runs::timeline::ZOOM_JS;
use crate::svg::esc;

/// The section, or nothing when no run asked for spans.
pub fn section(file: &RunsFile, charts: Vec<&Chart>) -> String {
    let asked: Vec<_> = file.runs.iter().filter(|r| r.spans.is_some()).collect();
    if asked.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<section id=\"timeline\"><h2>Threads over time</h2><p class=\"note\">Who held what for the first requests of a run, as the classic articles draw it: a lane per thread (blue: running on it; vermillion: waiting on IO while holding it), a band for what holds no thread (grey: queued; green: an IO wait on a timer), and the client's view, one row per request by send time, cut by its timeout (the dashed line). Left the measurement, right the simulation's prediction of the same sample, on one time axis. Scroll to zoom, drag to pan, double-click to reset; both pictures of a run move together.</p>",
    );
    for (_, r) in runs(file) {
        let prefix = format!("timeline-{}-", crate::runs::charts::slug(&r.name));
        s.push_str("<div class=\"charts\">");
        for c in charts.iter().filter(|c| c.id.starts_with(&prefix)) {
            s.push_str(&c.svg);
        }
        s.push_str("</div>");
        if let Some(why) = r.spans.as_ref().and_then(|x| x.missing.as_ref()) {
            s.push_str(&format!(
                "<p class=\"note\">{}: measured spans missing: {}</p>",
                esc(&title(r)),
                esc(why)
            ));
        }
    }
    for r in asked.iter().filter(|r| {
        r.spans
            .as_ref()
            .is_some_and(|x| x.measured.is_none() && x.predicted.is_none())
    }) {
        let why = r.spans.as_ref().and_then(|x| x.missing.as_deref());
        s.push_str(&format!(
            "<p class=\"note\">{}: no timeline ({})</p>",
            esc(&title(r)),
            esc(why.unwrap_or("nothing was recorded"))
        ));
    }
    s.push_str("</section>");
    if !charts.is_empty() {
        s.push_str("<script>//<![CDATA[\n");
        s.push_str(ZOOM_JS);
        s.push_str("//]]></script>");
    }
    s
}
