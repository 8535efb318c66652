//! Capacity searches (`iolab.capacity/1`, what `iolab capacity` measured):
//! per target, the curve (one row per step, in the order measured), the
//! answer with its bracket, the noise met, the fitted model in one
//! sentence, what each model would do with the fitted service, and the
//! USL sweep beside it ([`crate::usl`]); as text, Markdown, the document as
//! JSON, CSV (one record per step), and a self-contained HTML page whose
//! charts draw the measured curve beside each model's simulated one.

use iolab_model::capacity::{
    CapacityFile, CpuSource, Fit, Search, Source, StepRecord, CAPACITY_SCHEMA,
};
use serde_json::json;

use crate::grid::{self, Grid};
use crate::numbers::{ms, num, opt, percent, rate, secs};
use crate::svg::esc;
use crate::{csv, json as to_json, Format, RenderError};

mod answer;
mod charts;
pub mod endpoints;
mod gate;
pub mod known;
pub mod mix_cpu;
use answer::budget_line;
pub use answer::{answer, estimate, machine_line, repeat_line, too_noisy, windows};
pub use charts::charts;
pub use gate::gate_line;

/// Render a capacity document in any format.
pub fn render(doc: &CapacityFile, format: Format) -> Result<Vec<u8>, RenderError> {
    Ok(match format {
        Format::Table => text(doc).into_bytes(),
        Format::Markdown => markdown(doc).into_bytes(),
        Format::Json => to_json(doc)?,
        Format::Csv => csv_steps(doc).into_bytes(),
        Format::Html => html(doc).into_bytes(),
    })
}

/// A step's decision: passed, `failed`, or no verdict when the generator
/// was too late to judge the target by (issue 50: a step printed "FAIL
/// (... no verdict on the target)").
fn decision(s: &StepRecord, failed: &'static str) -> &'static str {
    match (s.passed, s.generator_saturated) {
        (true, _) => "pass",
        (false, true) => "no verdict",
        (false, false) => failed,
    }
}

/// One line per step, for progress: `ramp  80 req/s for 2.0s: pass (...)`.
pub fn step_line(s: &StepRecord) -> String {
    format!(
        "{:<7} {:>9} for {}: {} ({}, p99 {}, success {}){}",
        s.stage
            .map_or("-".into(), |p| format!("{p:?}").to_lowercase()),
        format!("{}/s", rate(s.rate_rps)),
        secs(s.duration_s),
        decision(s, "FAIL"),
        s.verdict,
        latency(s, s.p99_ms),
        percent(s.success_ratio),
        s.windows
            .map_or(String::new(), |w| format!(": windows {}", windows(&w)))
    )
}

/// A step's latency percentile `v`, or `None` when nothing answered: a step
/// with no answer has no latency, and its 0 is not a measurement.
pub(crate) fn answered_latency(s: &StepRecord, v: f64) -> Option<f64> {
    (s.attack.requests.answered() > 0).then_some(v)
}

/// [`answered_latency`] as text: `-` when missing.
fn latency(s: &StepRecord, v: f64) -> String {
    opt(answered_latency(s, v), ms)
}

/// The curve: one row per step.
pub fn curve(search: &Search) -> Grid {
    let mut g = Grid::new(
        &[
            "#",
            "phase",
            "rate/s",
            "for",
            "verdict",
            "windows",
            "success",
            "goodput/s",
            "p50",
            "p99",
            "in flight",
            "CPU cores",
        ],
        &[
            true, false, true, true, false, false, true, true, true, true, true, true,
        ],
    );
    for (i, s) in search.steps.iter().enumerate() {
        g.rows.push(vec![
            (i + 1).to_string(),
            s.stage
                .map_or("-".into(), |p| format!("{p:?}").to_lowercase()),
            rate(s.rate_rps),
            secs(s.duration_s),
            decision(s, "fail").into(),
            s.windows.map_or(String::new(), |w| windows(&w)),
            percent(s.success_ratio),
            rate(s.goodput_rps),
            latency(s, s.p50_ms),
            latency(s, s.p99_ms),
            num(s.in_flight, 1),
            opt(s.cpu_cores, |c| num(c, 2)),
        ]);
    }
    g
}

/// What each change would buy: its capacity under the objective (the
/// simulation searched), the closed form's, and the curve's last point.
pub fn what_if(search: &Search) -> Grid {
    let mut g = Grid::new(
        &[
            "change",
            "model",
            "capacity/s",
            "closed form/s",
            "at",
            "success",
            "p99",
        ],
        &[false, false, true, true, true, true, true],
    );
    for w in &search.what_if {
        let last = w.points.last();
        g.rows.push(vec![
            w.change.clone(),
            w.label.clone(),
            match w.cannot_say {
                Some(_) => "cannot say".into(),
                None => opt(w.slo_capacity_rps, rate),
            },
            opt(w.capacity_rps, rate),
            opt(last.map(|p| p.rate_rps), |r| format!("{}/s", rate(r))),
            opt(last.map(|p| p.success_ratio), percent),
            opt(last.map(|p| p.p99_ms), ms),
        ]);
    }
    g
}

/// The lines under the what-ifs: why some cannot be said (and what would
/// settle them), and those predicted far above the capacity measured.
pub fn after_what_if(s: &Search) -> Vec<String> {
    let unsaid = s.what_if.iter().find_map(|w| w.cannot_say.clone());
    unsaid.into_iter().chain(extrapolated(s)).collect()
}

/// The what-ifs predicted far above the capacity measured, in a sentence.
pub fn extrapolated(s: &Search) -> Option<String> {
    let predicted = s.what_if.iter().filter(|w| !w.fitted);
    crate::beyond::line(
        s.capacity_rps,
        predicted.map(|w| (w.change.as_str(), w.slo_capacity_rps)),
    )
}

fn source(s: Source) -> &'static str {
    match s {
        Source::Latency => "latency",
        Source::Proc => "/proc",
        Source::Kernel => "kernel",
        Source::Prometheus => "prometheus",
    }
}

/// ` (the slope of CPU against rate; the pinned cores' busy time)`: how
/// the CPU per request was read, and whose.
pub(crate) fn cpu_how(f: &Fit) -> String {
    let whose = match f.cpu_source {
        Some(CpuSource::Cores) => "; the pinned cores' busy time",
        Some(CpuSource::Process) => "; the process's CPU",
        None => "",
    };
    // The method's words are the model's, as the fit's evidence says them.
    f.cpu_method
        .map_or(String::new(), |m| format!(" ({}{whose})", m.phrase()))
}

/// The lines after a search's curve: answer, outcome, noise, fit, rule.
fn findings(s: &Search) -> Vec<String> {
    let mut out = vec![answer(s)];
    out.extend(s.fails_first.as_ref().map(endpoints::first_line));
    out.push(format!("{} (in {})", s.outcome, secs(s.elapsed_s)));
    out.extend(budget_line(s));
    out.extend(machine_line(s));
    for n in &s.noise {
        out.push(format!(
            "noise: {}/s passed at or above {}/s, which failed",
            rate(n.passed_rps),
            rate(n.failed_rps)
        ));
    }
    if let Some(f) = &s.fit {
        out.push(format!(
            "fit: S = {}, c = capacity x S = {} at the knee (Little's law), CPU {} per request{}; as {} running {}",
            ms(f.service_ms),
            num(f.concurrency, 1),
            opt(f.cpu_per_request_ms, ms),
            cpu_how(f),
            f.model,
            f.steps
        ));
        let b = &f.binding;
        out.push(format!(
            "binding resource: {} ({} confidence): {} {}.",
            b.resource,
            b.confidence.as_str(),
            s.name,
            b.sentence
        ));
        for e in &b.evidence {
            out.push(format!("  evidence ({}): {}", source(e.source), e.text));
        }
        for l in &b.also {
            out.push(format!(
                "  beside it: {}, binding at ~{}/s{}",
                l.what(),
                rate(l.binds_at_rps),
                if l.configured { "" } else { " or more" }
            ));
        }
        if let Some(settle) = &b.settle {
            out.push(format!("  would settle it: {settle}"));
        }
    }
    out.extend(s.endpoint_split.as_ref().map(|x| {
        let binding = s.fit.as_ref().map(|f| f.binding.resource.to_string());
        endpoints::split_line(x, binding.as_deref())
    }));
    out.extend(mix_cpu::lines(s));
    out.extend(s.notes.iter().map(|n| format!("note: {n}")));
    out.push(format!("step rule: {}", s.step_rule));
    out
}

fn heading(doc: &CapacityFile, s: &Search) -> String {
    let objective = match &doc.endpoint_slo {
        Some(per) => per.to_string(),
        None => doc.slo.to_string(),
    };
    format!(
        "capacity of {} ({}), objective {objective}",
        s.name, s.target
    )
}

/// Terminal text.
pub fn text(doc: &CapacityFile) -> String {
    let mut lines: Vec<String> = doc.gate.iter().map(gate_line).collect();
    lines.extend(repeat_line(doc));
    for s in &doc.searches {
        lines.push(heading(doc, s));
        lines.extend(curve(s).text());
        lines.extend(endpoints::text(s));
        lines.push(String::new());
        lines.extend(findings(s));
        if !s.what_if.is_empty() {
            lines.push(String::new());
            lines.push("what each change would buy (the fitted service simulated):".into());
            lines.extend(what_if(s).text());
            lines.extend(after_what_if(s));
        }
        if let Some(sw) = &s.sweep {
            lines.push(String::new());
            lines.push("the Universal Scalability Law beside the queueing fit:".into());
            lines.extend(crate::usl::section(sw));
        }
        lines.push(String::new());
    }
    grid::join(&lines)
}

/// Markdown.
pub fn markdown(doc: &CapacityFile) -> String {
    let mut lines: Vec<String> = doc
        .gate
        .iter()
        .map(|g| format!("**{}**", grid::cell(&gate_line(g))))
        .chain(repeat_line(doc).map(|l| format!("**{}**", grid::cell(&l))))
        .collect();
    for s in &doc.searches {
        lines.push(format!("## {}", grid::cell(&heading(doc, s))));
        lines.push(String::new());
        lines.extend(curve(s).markdown());
        lines.extend(endpoints::markdown(s));
        lines.push(String::new());
        lines.extend(findings(s).iter().map(|l| format!("- {}", grid::cell(l))));
        if !s.what_if.is_empty() {
            lines.push(String::new());
            lines.push("What each change would buy (the fitted service simulated):".into());
            lines.push(String::new());
            lines.extend(what_if(s).markdown());
            lines.extend(
                after_what_if(s)
                    .iter()
                    .map(|l| format!("\n{}", grid::cell(l))),
            );
        }
        if let Some(sw) = &s.sweep {
            lines.push(String::new());
            lines.push("The Universal Scalability Law beside the queueing fit:".into());
            lines.push(String::new());
            lines.extend(crate::usl::levels(sw).markdown());
            lines.push(String::new());
            let said = crate::usl::lines(sw);
            lines.extend(said.iter().map(|l| format!("- {}", grid::cell(l))));
        }
        lines.push(String::new());
    }
    grid::join(&lines)
}

/// CSV: one record per step of every search.
pub fn csv_steps(doc: &CapacityFile) -> String {
    let rows: Vec<(String, StepRecord)> = doc
        .searches
        .iter()
        .flat_map(|s| s.steps.iter().map(|st| (s.name.clone(), st.clone())))
        .collect();
    csv::records(
        &rows,
        &(String::new(), StepRecord::default()),
        |(name, s)| {
            vec![
                ("target", json!(name)),
                ("phase", json!(s.stage)),
                ("rate_rps", json!(s.rate_rps)),
                ("duration_s", json!(s.duration_s)),
                ("passed", json!(s.passed)),
                ("success_ratio", json!(s.success_ratio)),
                ("goodput_rps", json!(s.goodput_rps)),
                ("p50_ms", json!(answered_latency(s, s.p50_ms))),
                ("p99_ms", json!(answered_latency(s, s.p99_ms))),
                ("in_flight", json!(s.in_flight)),
                ("cpu_cores", json!(s.cpu_cores)),
                ("cpu_per_request_ms", json!(s.cpu_per_request_ms)),
                ("verdict", json!(s.verdict)),
            ]
        },
    )
}

/// The HTML page: the text report and two charts per search.
pub fn html(doc: &CapacityFile) -> String {
    let mut body = String::new();
    for s in &doc.searches {
        body.push_str(&format!("<h2>{}</h2>", esc(&heading(doc, s))));
        body.push_str("<div class=\"charts\">");
        for (_, svg) in charts(s) {
            body.push_str(&svg);
        }
        body.push_str("</div><pre>");
        let mut lines = curve(s).text();
        lines.push(String::new());
        lines.extend(findings(s));
        lines.push(String::new());
        lines.extend(what_if(s).text());
        lines.extend(after_what_if(s));
        if let Some(sw) = &s.sweep {
            lines.push(String::new());
            lines.extend(crate::usl::section(sw));
        }
        body.push_str(&esc(&lines.join("\n")));
        body.push_str("</pre>");
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>iolab · capacity</title><style>body{{font-family:sans-serif;margin:2em}}pre{{font-size:12px}}.charts svg{{margin:0 1em 1em 0}}</style></head><body><main><h1>{}</h1><p>schema {}, started {}</p>{body}</main></body></html>\n",
        esc(&doc.name),
        CAPACITY_SCHEMA,
        esc(&doc.started_utc)
    )
}
