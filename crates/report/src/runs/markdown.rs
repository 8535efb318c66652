//! The Markdown report: the same tables as the terminal, as GitHub tables,
//! with the explanations as a list under each.

use iolab_model::runs::RunsFile;

use crate::grid;
use crate::runs::groups;
use crate::runs::summary;
use crate::runs::table;

/// Render Markdown.
pub fn render(file: &RunsFile) -> String {
    let rows = summary::rows(file);
    let pre = table::preamble(file);
    let mut out = vec![format!("## {}", pre[0]), String::new(), pre[1].clone()];
    out.push(String::new());
    for g in groups::groups(file) {
        out.push(format!("### {}", g.title));
        out.push(String::new());
        out.extend(table::grid(file, &rows, &g).markdown());
        out.push(String::new());
        for &i in &g.runs {
            let mark = match g.mark(i) {
                "" => String::new(),
                m => format!("{m} "),
            };
            out.push(format!("- {mark}{}", rows[i].explanation));
            for c in &rows[i].caveats {
                out.push(format!("  - *caveat*: {c}"));
            }
        }
        for line in super::compare::lines(file, &g) {
            out.push(format!("- *runtime vs stand-in*: {line}"));
        }
        out.push(String::new());
    }
    out.extend(super::waiting::render::lines(file, true));
    out.extend(super::held::render::lines(file, true));
    out.push(table::FOOTNOTE.to_string());
    grid::join(&out)
}
