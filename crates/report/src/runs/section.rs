//! A measured section of every document (the cost of waiting, of a held
//! connection): a title, a note on what the columns mean, one table and one
//! sentence per target, laid out once for the terminal, Markdown and HTML.

use crate::grid::Grid;
use crate::svg::esc;

/// One section's parts, made from the numbers by its own module.
pub(crate) struct Section<'a> {
    /// The HTML element's id: `waiting`.
    pub id: &'a str,
    pub title: &'a str,
    pub note: &'a str,
    pub grid: Grid,
    pub sentences: Vec<String>,
}

impl Section<'_> {
    /// Terminal and Markdown lines: a heading, the table, the sentences.
    pub fn lines(&self, markdown: bool) -> Vec<String> {
        let (title, note) = (self.title, self.note);
        let mut out = Vec::new();
        if markdown {
            out.extend([
                format!("### {title}"),
                String::new(),
                note.to_string(),
                String::new(),
            ]);
            out.extend(self.grid.markdown());
            out.push(String::new());
            out.extend(self.sentences.iter().map(|s| format!("- {s}")));
        } else {
            out.push(format!("{title}: {note}"));
            out.extend(self.grid.text());
            out.push(String::new());
            out.extend(self.sentences.iter().map(|s| format!("  - {s}")));
        }
        out.push(String::new());
        out
    }

    /// The HTML section: note, `chart` when there is one, table, sentences.
    pub fn html(&self, chart: Option<&str>) -> String {
        let mut s = format!(
            "<section id=\"{}\"><h2>{}</h2><p class=\"note\">{}</p>",
            self.id,
            self.title,
            esc(self.note)
        );
        if let Some(svg) = chart {
            s.push_str(&format!("<div class=\"charts\">{svg}</div>"));
        }
        s.push_str(&self.grid.html());
        s.push_str("<ul>");
        for line in &self.sentences {
            s.push_str(&format!("<li>{}</li>", esc(line)));
        }
        s.push_str("</ul></section>");
        s
    }
}
