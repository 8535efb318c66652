//! The cost-of-waiting section in every document: one table (terminal,
//! Markdown, HTML) and one sentence per target, made from the numbers beside it.

use iolab_model::runs::RunsFile;

use super::{costs, Cost, STRAIGHT_R2};
use crate::grid::Grid;
use crate::numbers::{count, mib, num, opt, secs};
use crate::runs::section::Section;

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
            kib_cell(c),
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

/// The memory cell: the slope when RSS rose along its line, else missing
/// with the r² that says why.
fn kib_cell(c: &Cost) -> String {
    match (c.kib_cost(), c.kib_per_request) {
        (Some(k), _) => num(k, 1),
        (None, Some(_)) => missing_because(c.r2, c.levels.len()),
        (None, None) => "-".into(),
    }
}

/// The CPU cell: the slope, `< R` when it is within the resolution, else
/// missing with the r² that says why.
fn cpu_cell(c: &Cost) -> String {
    match (c.cpu_us_per_request, c.cpu_resolution_us, c.cpu_cost()) {
        (Some(v), Some(r), _) if v.abs() < r => format!("< {}", num(r, 2)),
        (_, _, Some(v)) => num(v, 2),
        (Some(_), _, None) => missing_because(c.cpu_r2, c.levels.len()),
        (None, _, _) => "-".into(),
    }
}

/// Why points are not read as a line: their r² against the bar.
fn not_a_line(r2: Option<f64>, levels: usize) -> String {
    format!(
        "r² {} through {} levels, under {}",
        opt(r2, |r| num(r, 2)),
        levels,
        num(STRAIGHT_R2, 1)
    )
}

/// "-", with the r² when there is one worth showing.
fn missing_because(r2: Option<f64>, levels: usize) -> String {
    match r2.filter(|_| levels > 2) {
        Some(r) => format!("- (r² {})", num(r, 2)),
        None => "-".into(),
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
        (Some(k), _) if k > 0.0 => s.push_str(&format!(
            " RSS did not follow the requests held ({}), so no memory per request is read from it;",
            not_a_line(c.r2, c.levels.len())
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
        (Some(cpu), _) => match c.cpu_cost() {
            Some(v) => s.push_str(&format!(" {} us of CPU a second each while waiting;", num(v, 2))),
            None if cpu < 0.0 => s.push_str(
                " CPU while waiting fell as more requests were held, so no CPU per request is read from it;",
            ),
            None => s.push_str(&format!(
                " CPU while waiting did not follow the requests held ({}), so no CPU per request is read from it;",
                not_a_line(c.cpu_r2, c.levels.len())
            )),
        },
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
    if let (Some(a), Some(k)) = (&c.anchor, c.kib_cost()) {
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

/// The section, or `None` when no target was measured at two levels.
fn section(file: &RunsFile) -> Option<Section<'static>> {
    Some(Section {
        id: "waiting",
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

/// The HTML section (table, sentences, chart), or nothing.
pub fn html(file: &RunsFile, chart: Option<&str>) -> String {
    section(file).map_or_else(String::new, |s| s.html(chart))
}

#[cfg(test)]
mod tests {
    use super::super::{fit, Ceiling, Level};
    use super::*;

    /// A target measured at these (held, RSS MiB, CPU s/s) levels.
    fn cost(points: &[(f64, f64, f64)]) -> Cost {
        let levels: Vec<Level> = points
            .iter()
            .enumerate()
            .map(|(i, &(held, rss_mb, cpu))| Level {
                run: i,
                clients: held as u32,
                in_flight: held,
                rss_mb,
                cpu_per_s: Some(cpu),
                span_s: 3.0,
                failed: 0,
            })
            .collect();
        let xs: Vec<f64> = points.iter().map(|p| p.0).collect();
        let mem = fit(&xs, &points.iter().map(|p| p.1).collect::<Vec<_>>()).unwrap();
        let cpu = fit(&xs, &points.iter().map(|p| p.2).collect::<Vec<_>>()).unwrap();
        let straight_mem = super::super::straight(mem.r2, levels.len()) && mem.slope > 0.0;
        Cost {
            label: "t".into(),
            runtime: "jvm".into(),
            kib_per_request: Some(mem.slope * 1024.0),
            base_mb: Some(mem.intercept),
            r2: mem.r2,
            cpu_us_per_request: Some(cpu.slope * 1e6),
            cpu_r2: cpu.r2,
            cpu_resolution_us: Some(0.001),
            idle_rss_mb: None,
            ready_s: None,
            in_gib: straight_mem.then(|| (1024.0 - mem.intercept) / mem.slope),
            most_held: 4000.0,
            most_held_ok: None,
            holds: Ceiling {
                n: None,
                why: "no limit known".into(),
            },
            anchor: None,
            levels,
        }
    }

    #[test]
    fn a_scatter_is_no_cost_per_waiting_request() {
        // The quiet run's jvm-loop-async: RSS up and down by the heap's own rules (r² ~0),
        // CPU falling as more were held. Before, "0.2 KiB per waiting request ... so 1 GiB
        // holds 3,216,911" and "-6.18 us of CPU a second each".
        let c = cost(&[
            (500.0, 300.0, 0.010),
            (1000.0, 330.0, 0.008),
            (2000.0, 300.0, 0.006),
            (4000.0, 315.0, 0.002),
        ]);
        assert!(
            c.r2.unwrap() < STRAIGHT_R2 && c.kib_per_request.unwrap() > 0.0,
            "{:?}",
            c.r2
        );
        assert_eq!(c.kib_cost(), None);
        assert_eq!(c.cpu_cost(), None);
        assert!(kib_cell(&c).starts_with("- (r² "), "{}", kib_cell(&c));
        assert!(cpu_cell(&c).starts_with("- (r² "), "{}", cpu_cell(&c));
        let s = sentence(&c);
        assert!(
            s.contains("RSS did not follow the requests held (r² "),
            "{s}"
        );
        assert!(s.contains("CPU while waiting fell"), "{s}");
        assert!(!s.contains("1 GiB holds"), "{s}");
    }

    #[test]
    fn a_straight_rise_is_the_cost_per_waiting_request() {
        // 3.5 KiB and 2 us/s per waiting request, exactly.
        let k = 3.5 / 1024.0;
        let c = cost(&[
            (500.0, 8.0 + 500.0 * k, 500.0 * 2e-6),
            (1000.0, 8.0 + 1000.0 * k, 1000.0 * 2e-6),
            (2000.0, 8.0 + 2000.0 * k, 2000.0 * 2e-6),
            (4000.0, 8.0 + 4000.0 * k, 4000.0 * 2e-6),
        ]);
        assert!((c.kib_cost().unwrap() - 3.5).abs() < 1e-9);
        assert!((c.cpu_cost().unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(kib_cell(&c), "3.5");
        assert_eq!(cpu_cell(&c), "2");
        let s = sentence(&c);
        let gib = ((1024.0 - 8.0) / k).round() as u64;
        assert!(
            s.contains(&format!(
                "3.5 KiB per waiting request (a line through 4 levels, r² 1), so 1 GiB holds {};",
                count(gib)
            )),
            "{s}"
        );
        assert!(
            s.contains(" 2 us of CPU a second each while waiting;"),
            "{s}"
        );
    }
}
