//! The cost-of-a-held-connection section in every document: one table
//! (terminal, Markdown, HTML) with the measurement beside `predict`'s
//! numbers, and one sentence per target made from the numbers beside it.

use iolab_model::runs::RunsFile;

use super::{costs, HeldCost, Level, Slope};
use crate::grid::Grid;
use crate::numbers::{count, ms, num, opt};
use crate::runs::section::Section;
use crate::runs::waiting::STRAIGHT_R2;

/// The section's title.
pub const TITLE: &str = "The cost of a held connection";

/// What the table's columns mean.
pub const NOTE: &str = "Each run opens N WebSockets on schedule and holds each, one small message a second per connection echoed. Established / asked: per level. Per held connection: the slope of the target's RSS and threads against the connections established, fitted through every level (a number only when the levels lie on a line, r² >= 0.9 from three levels), read on the plateau (every handshake answered or timed out, the first connections still held); CPU per message, p99 message latency (from the intended send) and the generator's own send lag p99 (a tail near it is the generator's) at the level that held the most; stops at: the most established where more were asked. Beside each, iolab predict's number (memory from the servers' buffer and stack sizes, docs/attack.md).";

/// The table, or `None` when no held run was measured.
pub fn grid(file: &RunsFile) -> Option<Grid> {
    let cs = costs(file);
    if cs.is_empty() {
        return None;
    }
    let mut g = Grid::new(
        &[
            "target",
            "established / asked",
            "KiB / held",
            "predicted",
            "threads / held",
            "predicted",
            "CPU us / msg",
            "p99 msg",
            "send lag p99",
            "stops at",
            "predicted",
        ],
        &[
            false, false, true, true, true, true, true, true, true, true, true,
        ],
    );
    for c in &cs {
        let top = top(c);
        let p = c.predicted.as_ref();
        g.rows.push(vec![
            c.label.clone(),
            (c.levels.iter())
                .map(|l| format!("{}/{}", count(l.established), count(l.asked)))
                .collect::<Vec<_>>()
                .join(" "),
            slope_cell(c.kib, 1),
            opt(p.map(|p| p.kib_per_connection), |v| num(v, 1)),
            slope_cell(c.threads, 2),
            opt(p.map(|p| p.threads_per_connection), |v| num(v, 2)),
            opt(top.and_then(Level::cpu_us_per_message), |v| num(v, 1)),
            opt(top.and_then(|l| l.p99_ms), ms),
            opt(top.map(|l| l.lag_p99_ms), ms),
            stop_cell(c),
            opt(c.predicted_stop.0, count),
        ]);
    }
    Some(g)
}

/// The level that established the most.
fn top(c: &HeldCost) -> Option<&Level> {
    c.levels.iter().max_by_key(|l| l.established)
}

/// A slope when the levels lie on its line; else `-`, with the r² that
/// says why when there is one.
fn slope_cell(s: Option<Slope>, d: usize) -> String {
    match s {
        Some(s) => match (s.cost(), s.r2) {
            (Some(v), _) => num(v, d),
            (None, Some(r)) => format!("- (r² {})", num(r, 2)),
            (None, None) => "-".into(),
        },
        None => "-".into(),
    }
}

fn stop_cell(c: &HeldCost) -> String {
    match (c.stopped_at, c.levels.iter().map(|l| l.asked).max()) {
        (Some(n), _) => count(n),
        (None, Some(all)) => format!("> {}", count(all)),
        (None, None) => "-".into(),
    }
}

/// One sentence per target.
pub fn sentences(file: &RunsFile) -> Vec<String> {
    costs(file).iter().map(sentence).collect()
}

/// What one target's numbers say.
pub fn sentence(c: &HeldCost) -> String {
    let mut s = format!("{}:", c.label);
    let p = c.predicted.as_ref();
    let levels = c.levels.len();
    let per = |name: &str, slope: Option<Slope>, d: usize, unit: &str, predicted: Option<f64>| {
        let pred = opt(predicted, |v| format!("predicted {}", num(v, d)));
        match slope {
            Some(sl) => match sl.cost() {
                Some(v) => format!(
                    " {unit}: {} per held connection (a line through {} levels{}; {pred});",
                    num(v, d),
                    sl.levels,
                    opt(sl.r2.filter(|_| sl.levels > 2), |r| format!(", r² {}", num(r, 2)))
                        .replace('-', "")
                ),
                None => format!(
                    " {name} did not follow the connections held (r² {} through {} levels, under {}), so no {unit} per connection is read from it ({pred});",
                    opt(sl.r2, |r| num(r, 2)),
                    sl.levels,
                    num(STRAIGHT_R2, 1)
                ),
            },
            None => format!(
                " the same number was established at every level, so no {unit} per connection is read from {name} ({pred});"
            ),
        }
    };
    if levels > 0 {
        s.push_str(&per(
            "RSS",
            c.kib,
            1,
            "KiB",
            p.map(|p| p.kib_per_connection),
        ));
        s.push_str(&per(
            "the threads",
            c.threads,
            2,
            "threads",
            p.map(|p| p.threads_per_connection),
        ));
    }
    if let Some(l) = top(c) {
        s.push_str(&format!(
            " at {} held, {} us of CPU per message and a message p99 of {}",
            count(l.established),
            opt(l.cpu_us_per_message(), |v| num(v, 1)),
            opt(l.p99_ms, ms)
        ));
        // A tail the generator's own sends reach is not the target's alone.
        if l.p99_ms.is_some_and(|p| l.lag_p99_ms >= p / 2.0) {
            s.push_str(&format!(
                " (the generator sent up to {} late at p99: the tail is the generator's as much as the target's)",
                ms(l.lag_p99_ms)
            ));
        }
        s.push(';');
    }
    match c.stopped_at {
        Some(n) => s.push_str(&format!(" it stopped at {}", count(n))),
        None => s.push_str(&format!(
            " it held every connection asked (up to {})",
            count(c.levels.iter().map(|l| l.asked).max().unwrap_or(0))
        )),
    }
    s.push_str(&format!(
        "; predicted to stop at {} ({}).",
        opt(c.predicted_stop.0, count),
        c.predicted_stop.1
    ));
    s
}

/// The section, or `None` when no held run was measured.
fn section(file: &RunsFile) -> Option<Section<'static>> {
    Some(Section {
        id: "held",
        title: TITLE,
        note: NOTE,
        grid: grid(file)?,
        sentences: sentences(file),
    })
}

/// Terminal and Markdown lines: a heading, the table, the sentences.
pub fn lines(file: &RunsFile, markdown: bool) -> Vec<String> {
    section(file).map_or_else(Vec::new, |s| s.lines(markdown))
}

/// The HTML section (its charts, table and sentences), or nothing.
pub fn html(file: &RunsFile, charts: &[&str]) -> String {
    let charts = charts.concat();
    let chart = (!charts.is_empty()).then_some(charts.as_str());
    section(file).map_or_else(String::new, |s| s.html(chart))
}
