//! The tables and charts the docs quote from saved results (`docs/results/<name>/`):
//! rendered here, by the same number rules as every report, so that a test
//! (`crates/cli/tests/docs/tables.rs`) can hold each page's table to the
//! saved document it cites. Pure, as every renderer: the same `runs.json`
//! always gives the same table.

use iolab_model::runs::{RunRecord, RunsFile};

use crate::grid::Grid;
use crate::numbers::{ms, num, percent, rate};
use crate::runs::{published, summary};

/// What a cell of [`by_rate`] shows of its run (the median repetition's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// `50/s · 100% · p99 113ms`: the 2xx answered within the timeout over
    /// the planned duration, the success share, the p99.
    OkSuccessP99,
    /// `48.1 (113ms)`: goodput over the run's window, and its p99.
    GoodputP99,
}

impl Cell {
    /// The cell's name in a page's marker (`by-rate:ok-success-p99`).
    pub fn parse(s: &str) -> Option<Cell> {
        match s {
            "ok-success-p99" => Some(Cell::OkSuccessP99),
            "goodput-p99" => Some(Cell::GoodputP99),
            _ => None,
        }
    }

    fn render(self, run: &RunRecord) -> String {
        let Some(a) = &run.attack else {
            return "-".into();
        };
        match self {
            Cell::OkSuccessP99 => {
                let ok_rps = a
                    .driver
                    .duration_s
                    .filter(|d| *d > 0.0)
                    .map_or(f64::NAN, |d| a.requests.ok as f64 / d);
                format!(
                    "{}/s · {} · p99 {}",
                    rate(ok_rps),
                    percent(a.success_ratio()),
                    ms(a.latency_ms.p99)
                )
            }
            Cell::GoodputP99 => format!(
                "{} ({})",
                rate(a.throughput_rps.goodput),
                ms(a.latency_ms.p99)
            ),
        }
    }
}

/// A row per model (its label, `pool(threads=20)`), a column per offered
/// rate (ascending), each cell one run: an experiment at a glance, as the
/// README shows the showdown. Rows in the order the runs first name them.
pub fn by_rate(file: &RunsFile, cell: Cell) -> Grid {
    let offered = |r: &RunRecord| r.attack.as_ref().and_then(|a| a.driver.rate);
    let mut rates: Vec<f64> = file.runs.iter().filter_map(offered).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    let mut labels: Vec<String> = Vec::new();
    for r in &file.runs {
        let l = summary::label(r);
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    let header: Vec<String> = std::iter::once("model".to_string())
        .chain(rates.iter().map(|r| format!("{} req/s", rate(*r))))
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut grid = Grid::new(&header, &vec![false; header.len()]);
    for l in labels {
        let mut row = vec![l.clone()];
        for r in &rates {
            let run = file
                .runs
                .iter()
                .find(|x| summary::label(x) == l && offered(x) == Some(*r));
            row.push(run.map_or("-".into(), |x| cell.render(x)));
        }
        grid.rows.push(row);
    }
    grid
}

/// A classic experiment's published numbers beside ours: the lead (what it
/// is, when and where ours was measured, the source) and the table, one row
/// per published figure (`run` is our run that matched it). `None` when the
/// plan carries no published block.
pub fn published(file: &RunsFile) -> Option<(Vec<String>, Grid)> {
    let (source, rows) = published::rows(file)?;
    let e = &file.environment;
    let started = file.started_utc.get(..16).unwrap_or(&file.started_utc);
    let lead = vec![
        file.plan.description.clone(),
        format!(
            "Measured {started}Z on {} cores ({}), time-scale {} (ours shown unscaled). Source: {source}",
            e.cores,
            e.cpu_model,
            num(file.plan.scale, 4)
        ),
    ];
    let mut grid = Grid::new(
        &[
            "run",
            "metric",
            "published",
            "ours",
            "ours / published",
            "note",
        ],
        &[false, false, true, true, true, false],
    );
    for r in rows {
        grid.rows.push(vec![
            r.measured.unwrap_or(r.run),
            r.metric,
            r.published,
            r.ours,
            r.ratio.map_or("-".into(), |x| format!("{}x", num(x, 2))),
            r.note,
        ]);
    }
    Some((lead, grid))
}

/// The cost of a held connection as the docs show it (`docs/attack.md`,
/// C10K): the report's table, measured beside predicted, then one line per
/// target made from its numbers. `None` when no held run was measured.
pub fn held(file: &RunsFile) -> Option<Vec<String>> {
    let mut out = crate::runs::held::render::grid(file)?.markdown();
    out.push(String::new());
    out.extend(
        crate::runs::held::render::sentences(file)
            .into_iter()
            .map(|s| format!("- {s}")),
    );
    Some(out)
}

/// The report's chart `id` as a standalone SVG file (the namespace a file
/// needs and an inline chart does not), for a page to show beside its
/// table. `None` when the results draw no such chart.
pub fn chart(file: &RunsFile, id: &str) -> Option<String> {
    let c = crate::runs::charts::charts(file)
        .into_iter()
        .find(|c| c.id == id)?;
    Some(format!(
        "{}\n",
        c.svg
            .replacen("<svg ", "<svg xmlns=\"http://www.w3.org/2000/svg\" ", 1)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> RunsFile {
        let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).expect("a fixture");
        serde_json::from_str(&text).expect("a runs.json")
    }

    #[test]
    fn by_rate_has_a_row_per_model_and_a_column_per_rate() {
        let g = by_rate(&fixture("showdown.json"), Cell::OkSuccessP99);
        assert_eq!(
            g.header,
            [
                "model",
                "50 req/s",
                "100 req/s",
                "200 req/s",
                "400 req/s",
                "800 req/s"
            ]
        );
        assert_eq!(g.rows.len(), 6, "six models");
        assert!(g.rows.iter().flatten().skip(1).all(|c| !c.is_empty()));
        let cell = &g.rows[1][1];
        assert!(cell.contains("/s · ") && cell.contains(" · p99 "), "{cell}");
        let g = by_rate(&fixture("showdown.json"), Cell::GoodputP99);
        assert!(g.rows[1][1].ends_with(')'), "{}", g.rows[1][1]);
        assert_eq!(Cell::parse("ok-success-p99"), Some(Cell::OkSuccessP99));
        assert_eq!(Cell::parse("nope"), None);
    }

    #[test]
    fn published_names_the_run_it_matched_and_none_without_a_block() {
        assert!(published(&fixture("showdown.json")).is_none());
        let (lead, g) = published(&fixture("e1-workers.json")).expect("a published block");
        assert_eq!(lead.len(), 2);
        assert!(lead[1].starts_with("Measured "), "{}", lead[1]);
        assert_eq!(g.header[..4], ["run", "metric", "published", "ours"]);
        assert!(!g.rows.is_empty());
        assert!(
            g.rows.iter().all(|r| !r[0].starts_with('{')),
            "run names, not selectors"
        );
    }
}
