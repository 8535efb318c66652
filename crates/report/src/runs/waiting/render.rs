//! The cost-of-waiting section in every document: one table (terminal,
//! Markdown, HTML) and one sentence per target, made from the numbers beside it.

use iolab_model::runs::RunsFile;

use super::{costs, Cost};
use crate::grid::Grid;
use crate::numbers::{count, mib, num, opt, secs};
use crate::svg::esc;

/// The section's title.
pub const TITLE: &str = "The cost of waiting";

/// What the table's columns mean.
pub const NOTE: &str = "Each run holds C requests at once (a closed loop of C clients, one request each, waiting longer than the run). Per waiting request: the slope of RSS and of CPU against the requests held, fitted through every level (CPU `< R`: within what /proc's 10 ms ticks resolve); 1 GiB: (1024 MiB - the fitted base) / slope; idle: RSS before the warm-up; ready: start to first 200 on /health (a runtime's own warm-up included); predicted: what bounds the model, else the first machine limit it meets.";

/// The table, or `None` when no target was measured at two levels.
pub fn grid(file: &RunsFile) -> Option<Grid> {
    let cs = costs(file);
    if cs.is_empty() {
        return None;
    }
    let mut g = Grid::new(
        &[
            "target",
            "KiB / waiting",
            "CPU us/s / waiting",
            "in 1 GiB",
            "idle RSS",
            "ready",
            "held, all ok",
            "predicted to hold",
            "published / task",
        ],
        &[false, true, true, true, true, true, true, true, true],
    );
    for c in &cs {
        g.rows.push(vec![
            c.label.clone(),
            opt(c.kib_per_request, |v| num(v, 1)),
            cpu_cell(c),
            opt(c.in_gib, |v| count(v.round() as u64)),
            opt(c.idle_rss_mb, mib),
            opt(c.ready_s, secs),
            opt(c.most_held_ok, |v| count(v.round() as u64)),
            opt(c.holds.n, |v| count(v as u64)),
            opt(c.anchor.as_ref().map(|a| a.kib), |v| {
                format!("{} KiB", num(v, 2))
            }),
        ]);
    }
    Some(g)
}

/// The CPU cell: the slope, or `< R` when it is within the resolution.
fn cpu_cell(c: &Cost) -> String {
    match (c.cpu_us_per_request, c.cpu_resolution_us) {
        (Some(v), Some(r)) if v.abs() < r => format!("< {}", num(r, 2)),
        (v, _) => opt(v, |v| num(v, 2)),
    }
}

/// One sentence per target.
pub fn sentences(file: &RunsFile) -> Vec<String> {
    costs(file).iter().map(sentence).collect()
}

/// What one target's numbers say.
pub fn sentence(c: &Cost) -> String {
    let mut s = format!("{} ({}):", c.label, c.runtime);
    match (c.kib_per_request, c.in_gib) {
        (Some(k), Some(g)) if k > 0.0 => s.push_str(&format!(
            " {} KiB per waiting request (a line through {} levels{}), so 1 GiB holds {};",
            num(k, 1),
            c.levels.len(),
            // Two points always lie on a line: r² says something from three.
            opt(c.r2.filter(|_| c.levels.len() > 2), |r| format!(
                ", r² {}",
                num(r, 2)
            ))
            .replace('-', ""),
            count(g.round() as u64)
        )),
        (Some(k), _) => s.push_str(&format!(
            " RSS did not grow with the requests held ({} KiB each, within the noise of {} levels);",
            num(k, 1),
            c.levels.len()
        )),
        _ => s.push_str(" no memory slope (the levels held the same number);"),
    }
    match (c.cpu_us_per_request, c.cpu_resolution_us) {
        (Some(cpu), Some(r)) if cpu.abs() < r => s.push_str(&format!(
            " CPU while waiting below what the samples resolve (under {} us a second each);",
            num(r, 2)
        )),
        (Some(cpu), _) => s.push_str(&format!(
            " {} us of CPU a second each while waiting;",
            num(cpu, 2)
        )),
        _ => {}
    }
    s.push_str(&format!(
        " it held {} at most{}",
        count(c.most_held.round() as u64),
        opt(c.most_held_ok, |v| format!(
            " ({} with every request answered)",
            count(v.round() as u64)
        ))
        .replace('-', "")
    ));
    s.push_str(&format!(
        "; predicted to hold {} ({})",
        opt(c.holds.n, |v| count(v as u64)),
        c.holds.why
    ));
    if let (Some(a), Some(k)) = (&c.anchor, c.kib_per_request.filter(|k| *k > 0.0)) {
        s.push_str(&format!(
            ". Published: {} KiB per task ({}): a waiting request costs {}x a task",
            num(a.kib, 2),
            a.note,
            num(k / a.kib, 1)
        ));
    }
    s.push('.');
    s
}

/// Terminal and Markdown lines: a heading, the table, the sentences.
pub fn lines(file: &RunsFile, markdown: bool) -> Vec<String> {
    let Some(g) = grid(file) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if markdown {
        out.push(format!("### {TITLE}"));
        out.push(String::new());
        out.push(NOTE.to_string());
        out.push(String::new());
        out.extend(g.markdown());
        out.push(String::new());
        out.extend(sentences(file).into_iter().map(|s| format!("- {s}")));
    } else {
        out.push(format!("{TITLE}: {NOTE}"));
        out.extend(g.text());
        out.push(String::new());
        out.extend(sentences(file).into_iter().map(|s| format!("  - {s}")));
    }
    out.push(String::new());
    out
}

/// The HTML section (table, sentences, chart), or nothing.
pub fn html(file: &RunsFile, chart: Option<&str>) -> String {
    let Some(g) = grid(file) else {
        return String::new();
    };
    let mut s = format!(
        "<section id=\"waiting\"><h2>{TITLE}</h2><p class=\"note\">{}</p>",
        esc(NOTE)
    );
    if let Some(svg) = chart {
        s.push_str(&format!("<div class=\"charts\">{svg}</div>"));
    }
    s.push_str("<table><thead><tr>");
    for h in &g.header {
        s.push_str(&format!("<th>{}</th>", esc(h)));
    }
    s.push_str("</tr></thead><tbody>");
    for row in &g.rows {
        s.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let class = if g.numeric[i] { " class=\"n\"" } else { "" };
            s.push_str(&format!("<td{class}>{}</td>", esc(cell)));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table><ul>");
    for line in sentences(file) {
        s.push_str(&format!("<li>{}</li>", esc(&line)));
    }
    s.push_str("</ul></section>");
    s
}
