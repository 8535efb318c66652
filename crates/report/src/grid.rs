//! One table layout for every document: a [`Grid`] of formatted cells, laid
//! out as aligned terminal text or as a GitHub Markdown table. Renderers fill
//! the cells (with [`crate::numbers`]); how columns align lives only here.

/// A table: header, rows, and which columns are numbers (right-aligned).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grid {
    /// Column names.
    pub header: Vec<String>,
    /// Cells, row by row.
    pub rows: Vec<Vec<String>>,
    /// Right-align this column.
    pub numeric: Vec<bool>,
}

impl Grid {
    /// An empty grid with these columns; `numeric[c]` right-aligns column c.
    pub fn new(header: &[&str], numeric: &[bool]) -> Self {
        Grid {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            numeric: numeric.to_vec(),
        }
    }

    /// Aligned plain text: each line indented by two spaces, a rule of dashes
    /// under the header, text columns left-aligned and numbers right-aligned.
    pub fn text(&self) -> Vec<String> {
        let n = self.header.len();
        let widths: Vec<usize> = (0..n)
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| width(&r[c]))
                    .chain([width(&self.header[c])])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let s: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(c, v)| pad(v, widths[c], self.numeric[c]))
                .collect();
            format!("  {}", s.join("  ")).trim_end().to_string()
        };
        let mut out = vec![line(&self.header)];
        let total: usize = widths.iter().sum::<usize>() + 2 * n.saturating_sub(1);
        out.push(format!("  {}", "-".repeat(total)));
        out.extend(self.rows.iter().map(|r| line(r)));
        out
    }

    /// A GitHub Markdown table (numbers right-aligned, `|` escaped).
    pub fn markdown(&self) -> Vec<String> {
        let row = |cells: &[String]| {
            let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
            format!("| {} |", cells.join(" | "))
        };
        let align: Vec<&str> = self
            .numeric
            .iter()
            .map(|&n| if n { "---:" } else { ":---" })
            .collect();
        let mut out = vec![row(&self.header), format!("|{}|", align.join("|"))];
        out.extend(self.rows.iter().map(|r| row(r)));
        out
    }

    /// An HTML `<table>` (numeric cells `class="n"`, every cell escaped).
    pub fn html(&self) -> String {
        let esc = crate::svg::esc;
        let mut s = String::from("<table><thead><tr>");
        for h in &self.header {
            s.push_str(&format!("<th>{}</th>", esc(h)));
        }
        s.push_str("</tr></thead><tbody>");
        for row in &self.rows {
            s.push_str("<tr>");
            for (i, cell) in row.iter().enumerate() {
                let class = if self.numeric[i] { " class=\"n\"" } else { "" };
                s.push_str(&format!("<td{class}>{}</td>", esc(cell)));
            }
            s.push_str("</tr>");
        }
        s.push_str("</tbody></table>");
        s
    }
}

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

/// Escape a Markdown table cell.
pub fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Join lines with newlines, ending with one: every text renderer's last step.
pub fn join(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Grid {
        let mut g = Grid::new(&["run", "p99"], &[false, true]);
        g.rows.push(vec!["pool|a".into(), "101ms".into()]);
        g.rows.push(vec!["async".into(), "9.50ms".into()]);
        g
    }

    #[test]
    fn text_aligns_numbers_right_and_text_left() {
        assert_eq!(
            grid().text(),
            [
                "  run        p99",
                "  --------------",
                "  pool|a   101ms",
                "  async   9.50ms"
            ]
        );
    }

    #[test]
    fn markdown_escapes_pipes_and_aligns() {
        assert_eq!(
            grid().markdown(),
            [
                "| run | p99 |",
                "|:---|---:|",
                "| pool\\|a | 101ms |",
                "| async | 9.50ms |"
            ]
        );
    }
}
