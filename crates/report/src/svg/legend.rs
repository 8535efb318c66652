//! Legends: a line sample, the series' marker and its name, laid out in rows
//! that wrap to the chart's width.

use super::palette::{colour, marker, marker_svg};
use super::{c, esc};

/// One legend entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Text.
    pub name: String,
    /// Palette index.
    pub colour: usize,
    /// Drawn dashed (a prediction).
    pub dashed: bool,
}

const ROW: f64 = 18.0;

/// Palette index of the neutral entry (black) used for "predicted".
pub const GREY: usize = 6;

fn entry_width(e: &Entry) -> f64 {
    34.0 + e.name.chars().count() as f64 * 6.6 + 14.0
}

/// Height the legend needs in `width`.
pub fn height(entries: &[Entry], width: f64) -> f64 {
    if entries.is_empty() {
        return 0.0;
    }
    let mut rows = 1.0;
    let mut x = 0.0;
    for e in entries {
        let w = entry_width(e);
        if x > 0.0 && x + w > width {
            rows += 1.0;
            x = 0.0;
        }
        x += w;
    }
    rows * ROW
}

/// Draw the legend with its top-left corner at `(x0, y0)`.
pub fn draw(out: &mut String, x0: f64, y0: f64, width: f64, entries: &[Entry]) {
    out.push_str("<g class=\"legend\">");
    let (mut x, mut y) = (0.0, 0.0);
    for e in entries {
        let w = entry_width(e);
        if x > 0.0 && x + w > width {
            y += ROW;
            x = 0.0;
        }
        let (lx, ly) = (x0 + x, y0 + y + ROW / 2.0);
        let dash = if e.dashed {
            " stroke-dasharray=\"5 3\""
        } else {
            ""
        };
        out.push_str(&format!(
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{dash}/>",
            c(lx),
            c(ly),
            c(lx + 26.0),
            c(ly),
            colour(e.colour)
        ));
        out.push_str(&marker_svg(
            marker(e.colour),
            lx + 13.0,
            ly,
            colour(e.colour),
            e.dashed,
            "",
        ));
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#222222\">{}</text>",
            c(lx + 32.0),
            c(ly + 4.0),
            esc(&e.name)
        ));
        x += w;
    }
    out.push_str("</g>");
}
