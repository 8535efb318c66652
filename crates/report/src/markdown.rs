//! The Markdown report: the same tables as the terminal, as GitHub tables,
//! with the explanations as a list under each.

use iolab_model::runs::RunsFile;

use crate::groups;
use crate::summary;
use crate::table::{self, BEST};

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Render Markdown.
pub fn render(file: &RunsFile) -> String {
    let rows = summary::rows(file);
    let pre = table::preamble(file);
    let mut out = vec![format!("## {}", pre[0]), String::new(), pre[1].clone()];
    out.push(String::new());
    for g in groups::groups(file) {
        let grid = table::grid(file, &rows, &g);
        out.push(format!("### {}", g.title));
        out.push(String::new());
        out.push(format!(
            "| {} |",
            grid.header
                .iter()
                .map(|h| cell(h))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
        out.push(format!(
            "|{}|",
            grid.numeric
                .iter()
                .map(|&n| if n { "---:" } else { ":---" })
                .collect::<Vec<_>>()
                .join("|")
        ));
        for r in &grid.rows {
            out.push(format!(
                "| {} |",
                r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
            ));
        }
        out.push(String::new());
        for &i in &g.runs {
            let mark = if g.best == Some(i) {
                format!("{BEST} ")
            } else {
                String::new()
            };
            out.push(format!("- {mark}{}", rows[i].explanation));
            for short in file.runs[i].backend_shortfall() {
                out.push(format!(
                    "  - **backend did less work than the target claims**: {short}"
                ));
            }
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
