//! The terminal table: aligned plain text, one block per load, the best run
//! marked, and under each block one sentence per run.

use iolab_model::runs::RunsFile;

use crate::grid;
use crate::runs::groups;
use crate::runs::summary;
use crate::runs::table;

/// Render the terminal table.
pub fn render(file: &RunsFile) -> String {
    let rows = summary::rows(file);
    let mut out = table::preamble(file);
    out.push(String::new());
    for g in groups::groups(file) {
        out.push(g.title.clone());
        out.extend(table::grid(file, &rows, &g).text());
        out.push(String::new());
        for &i in &g.runs {
            let mark = match g.mark(i) {
                "" => "-",
                m => m,
            };
            out.push(format!("  {mark} {}", rows[i].explanation));
            for c in &rows[i].caveats {
                out.push(format!("      caveat: {c}"));
            }
        }
        for line in super::compare::lines(file, &g) {
            out.push(format!("  = {line}"));
        }
        out.push(String::new());
    }
    out.extend(super::waiting::render::lines(file, false));
    out.extend(super::held::render::lines(file, false));
    out.push(table::FOOTNOTE.to_string());
    grid::join(&out)
}
