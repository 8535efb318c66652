//! The terminal table: aligned plain text, one block per load, the best run
//! marked, and under each block one sentence per run.

use iolab_model::runs::RunsFile;

use crate::groups;
use crate::summary;
use crate::table::{self, Grid, BEST};

fn width(s: &str) -> usize {
    s.chars().count()
}

fn pad(s: &str, w: usize, right: bool) -> String {
    let fill = " ".repeat(w.saturating_sub(width(s)));
    if right {
        format!("{fill}{s}")
    } else {
        format!("{s}{fill}")
    }
}

fn lines(g: &Grid) -> Vec<String> {
    let n = g.header.len();
    let widths: Vec<usize> = (0..n)
        .map(|c| {
            g.rows
                .iter()
                .map(|r| width(&r[c]))
                .chain([width(&g.header[c])])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let s: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(c, v)| pad(v, widths[c], g.numeric[c]))
            .collect();
        format!("  {}", s.join("  ")).trim_end().to_string()
    };
    let mut out = vec![line(&g.header)];
    let total: usize = widths.iter().sum::<usize>() + 2 * (n - 1);
    out.push(format!("  {}", "-".repeat(total)));
    out.extend(g.rows.iter().map(|r| line(r)));
    out
}

/// Render the terminal table.
pub fn render(file: &RunsFile) -> String {
    let rows = summary::rows(file);
    let mut out = table::preamble(file);
    out.push(String::new());
    for g in groups::groups(file) {
        out.push(g.title.clone());
        out.extend(lines(&table::grid(file, &rows, &g)));
        out.push(String::new());
        for &i in &g.runs {
            let mark = if g.best == Some(i) { BEST } else { "-" };
            out.push(format!("  {mark} {}", rows[i].explanation));
        }
        out.push(String::new());
    }
    out.push(format!(
        "{BEST} best of its load: highest goodput, then lowest p99 (batch: shortest total)."
    ));
    let mut s = out.join("\n");
    s.push('\n');
    s
}
