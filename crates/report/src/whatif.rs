//! Verified counterfactuals (`iolab.whatif/1`, what `iolab whatif`
//! measured): per pair, A's binding resource with its evidence, then each
//! change's predicted capacity beside the measured one and the error; as
//! text, Markdown, the document as JSON, and CSV (one record per change).

use iolab_model::capacity::CpuSource;
use iolab_model::whatif::{Calibration, Counterfactual, CpuSpeed, Pair, WhatIfFile, WHATIF_SCHEMA};
use serde_json::json;

use crate::grid::{self, Grid};
use crate::numbers::{ms, num, opt, rate, secs};
use crate::{csv, Format, RenderError, Renderers};

/// Render a whatif document in `format` (one of [`Format::plain`]).
pub fn render(doc: &WhatIfFile, format: Format) -> Result<Vec<u8>, RenderError> {
    Renderers {
        schema: WHATIF_SCHEMA,
        text,
        markdown,
        csv: csv_rows,
    }
    .render(doc, format)
}

/// The pair table: A fitted (resource, evidence), each B predicted against
/// measured.
pub fn pairs(doc: &WhatIfFile) -> Grid {
    let mut g = Grid::new(
        &[
            "pair",
            "A capacity/s",
            "A fitted",
            "named",
            "B",
            "predicted/s",
            "measured/s",
            "error",
            "intervals",
        ],
        &[false, true, false, false, false, true, true, true, false],
    );
    for p in &doc.pairs {
        let fit = p.fitted.fit.as_ref();
        let named = fit.map_or("-".to_string(), |f| {
            format!("{} ({})", f.binding.resource, f.binding.confidence.as_str())
        });
        let right = match p.named_right {
            Some(true) => "right".to_string(),
            Some(false) => format!("WRONG (is {})", p.expected.map_or("?", |e| e.as_str())),
            None => "-".into(),
        };
        for (i, c) in p.changes.iter().enumerate() {
            let first = i == 0;
            g.rows.push(vec![
                if first { p.name.clone() } else { String::new() },
                if first {
                    opt(p.fitted.capacity_rps, rate)
                } else {
                    String::new()
                },
                if first { named.clone() } else { String::new() },
                if first { right.clone() } else { String::new() },
                c.change.clone(),
                match (c.predicted.slo_capacity_rps, c.predicted_interval) {
                    (Some(p), Some(i)) => crate::capacity::estimate(p, &i).replace("/s", ""),
                    (p, _) => opt(p, rate),
                },
                match (c.measured.capacity_rps, c.measured.interval) {
                    (Some(m), Some(i)) => crate::capacity::estimate(m, &i).replace("/s", ""),
                    (m, _) => opt(m, rate),
                },
                opt(c.error_pct, |e| format!("{}%", num(e, 1))),
                opt(c.intervals_meet, |m| {
                    if m { "meet" } else { "apart" }.to_string()
                }),
            ]);
        }
    }
    g
}

/// A's naming and evidence, and how long each search took.
fn details(p: &Pair) -> Vec<String> {
    let mut out = vec![format!("{}: {}", p.name, p.description)];
    if let Some(f) = &p.fitted.fit {
        out.push(format!("  A ({}) {}.", p.fitted.name, f.binding.sentence));
        out.push(format!(
            "    fitted: CPU {} per request{}; as {} running {}",
            opt(f.cpu_per_request_ms, ms),
            crate::capacity::cpu_how(f),
            f.model,
            f.steps
        ));
        out.extend(f.binding.evidence.iter().map(|e| format!("    {}", e.text)));
        if let Some(s) = &f.binding.settle {
            out.push(format!("    would settle it: {s}"));
        }
        // A calibrated prediction's cost was read near its own rate.
        let predicted = p
            .changes
            .iter()
            .filter(|c| !read_near(c))
            .map(|c| (c.name.as_str(), c.predicted.slo_capacity_rps));
        out.extend(crate::beyond::line(p.fitted.capacity_rps, predicted).map(|l| format!("  {l}")));
        for c in &p.changes {
            out.extend(c.calibration.as_ref().map(|k| calibrated(&c.name, k)));
        }
    } else {
        out.push(format!(
            "  A ({}): no fit ({})",
            p.fitted.name, p.fitted.outcome
        ));
    }
    out.push(format!(
        "  searches: A {} ({} steps){}",
        secs(p.fitted.elapsed_s),
        p.fitted.steps.len(),
        p.changes
            .iter()
            .map(|c| format!(
                ", {} {} ({} steps)",
                c.name,
                secs(c.measured.elapsed_s),
                c.measured.steps.len()
            ))
            .collect::<String>()
    ));
    out.extend(p.cpu_speed.as_ref().map(speed_line));
    out
}

/// How steady the CPU was through the pair, from the reading beside it.
fn speed_line(s: &CpuSpeed) -> String {
    format!(
        "  the CPU: a fixed loop took {} to {} (p10 to p90 of {} timings on the generator's cores): its speed moved {}% through the pair",
        ms(s.p10_ms),
        ms(s.p90_ms),
        s.timings,
        num(s.spread_pct(), 0)
    )
}

/// B's cost was calibrated at a rate within [`crate::beyond::FACTOR`] of
/// the capacity predicted with it: not an extrapolation of A's cost.
fn read_near(c: &Counterfactual) -> bool {
    let last = c.calibration.as_ref().and_then(|k| k.b_runtime.last());
    match (last, c.predicted.slo_capacity_rps) {
        (Some(r), Some(p)) => p <= crate::beyond::FACTOR * r.rate_rps,
        _ => false,
    }
}

/// How B's cost per request was calibrated, in one sentence from its
/// numbers.
pub fn calibrated(b: &str, k: &Calibration) -> String {
    let tried: Vec<String> = k
        .b_runtime
        .iter()
        .map(|r| {
            format!(
                "{} ms at {}/s{}",
                opt(r.ms, cost),
                rate(r.rate_rps),
                if r.met { "" } else { " (the objective failed)" }
            )
        })
        .collect();
    let ceiling = match (k.ceiling_rps(), k.held_rps(), k.copy_capacity_rps()) {
        (Some(failed), Some(held), Some(holds)) => format!(
            "; it failed the objective at {}/s and met it at {}/s, so B, doing that and more, is predicted at most {}/s, between them",
            rate(failed),
            rate(held),
            rate(holds)
        ),
        _ => String::new(),
    };
    format!(
        "  calibrated {b}: A cost {} ms a request at {}/s ({}{}), its runtime serving {} alone {} ms, so the handler's own work is {} ms (±{} ms{}); B's runtime serving {}: {}{ceiling}; B simulated at {} ms a request (uncalibrated: {}/s); {} ms higher: {}/s",
        cost(k.a_ms),
        rate(k.a_rate_rps),
        match k.source {
            CpuSource::Process => "the process trees' CPU, as the copies'",
            CpuSource::Cores => "the pinned cores' busy time, as the copies'",
        },
        warm_words(k),
        k.wait,
        cost(k.a_runtime_ms),
        cost(k.handler_ms()),
        cost(k.noise_ms),
        if k.within_noise() { ", within the noise" } else { "" },
        k.wait,
        tried.join(", then "),
        opt(k.b_ms(), cost),
        opt(k.uncalibrated_rps, rate),
        cost(k.noise_ms),
        opt(k.lower_rps, rate),
    )
}

/// How warm A was when its cost was read: `; held again warm after its
/// search, 5321 requests answered by then`.
fn warm_words(k: &Calibration) -> String {
    let answered = k.a_answered.map_or("-".into(), |n| format!("{n:.0}"));
    if k.a_read_again() {
        format!("; held again after its search and its copy, {answered} requests answered before its copy")
    } else if k.a_read_warm() {
        format!("; held again warm after its search, {answered} requests answered by then")
    } else if k.a_warm.is_empty() {
        format!("; in its search, {answered} requests answered by then")
    } else {
        // Why the warm holds were not read: the last two say.
        let why = match k.a_warm.as_slice() {
            [.., a, b] if !(a.met && b.met) => "it failed the objective",
            [_, _, ..] => "its CPU was not read",
            _ => "once only",
        };
        format!("; in its search, {answered} requests answered by then: held again warm, {why}")
    }
}

/// A cost per request, ms, to the microsecond.
fn cost(ms: f64) -> String {
    format!("{ms:.3}")
}

/// Terminal text.
pub fn text(doc: &WhatIfFile) -> String {
    let mut lines = vec![format!(
        "what a change buys, predicted from a black-box fit and then measured (time-scale {})",
        num(doc.scale, 2)
    )];
    lines.extend(pairs(doc).text());
    for p in &doc.pairs {
        lines.push(String::new());
        lines.extend(details(p));
    }
    grid::join(&lines)
}

/// Markdown.
pub fn markdown(doc: &WhatIfFile) -> String {
    let mut lines = vec![
        format!("## What a change buys (time-scale {})", num(doc.scale, 2)),
        String::new(),
    ];
    lines.extend(pairs(doc).markdown());
    for p in &doc.pairs {
        lines.push(String::new());
        lines.extend(
            details(p)
                .iter()
                .map(|l| format!("- {}", grid::cell(l.trim()))),
        );
    }
    grid::join(&lines)
}

/// One CSV record: pair, A's capacity, A's binding, change, predicted,
/// measured, error.
type Row = (
    String,
    Option<f64>,
    String,
    String,
    Option<f64>,
    Option<f64>,
    Option<f64>,
);

/// CSV: one record per change.
pub fn csv_rows(doc: &WhatIfFile) -> String {
    let rows: Vec<Row> = doc
        .pairs
        .iter()
        .flat_map(|p| {
            let named = p
                .fitted
                .fit
                .as_ref()
                .map_or(String::new(), |f| f.binding.resource.to_string());
            p.changes.iter().map(move |c| {
                (
                    p.name.clone(),
                    p.fitted.capacity_rps,
                    named.clone(),
                    c.change.clone(),
                    c.predicted.slo_capacity_rps,
                    c.measured.capacity_rps,
                    c.error_pct,
                )
            })
        })
        .collect();
    let empty = (
        String::new(),
        None,
        String::new(),
        String::new(),
        None,
        None,
        None,
    );
    csv::records(&rows, &empty, |r| {
        vec![
            ("pair", json!(r.0)),
            ("a_capacity_rps", json!(r.1)),
            ("a_binding", json!(r.2)),
            ("change", json!(r.3)),
            ("predicted_rps", json!(r.4)),
            ("measured_rps", json!(r.5)),
            ("error_pct", json!(r.6)),
        ]
    })
}

#[cfg(test)]
mod tests;
