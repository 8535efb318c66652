//! Axes: grid lines, ticks with labels, and axis titles with units.

use super::scale::Scale;
use super::{c, esc, Rect};

/// Draw both axes of a plot area, with light grid lines at the ticks.
pub fn draw(
    out: &mut String,
    f: Rect,
    x: &Scale,
    y: &Scale,
    xlabel: &str,
    ylabel: &str,
    font: f64,
) {
    out.push_str("<g class=\"axes\" fill=\"#333333\">");
    for (v, l) in x.ticks() {
        let px = x.map(v);
        if px < f.x - 0.5 || px > f.x + f.w + 0.5 {
            continue;
        }
        out.push_str(&format!(
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#e3e3e3\"/><text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\" font-size=\"{font}\">{4}</text>",
            c(px),
            c(f.y),
            c(f.y + f.h + 4.0),
            c(f.y + f.h + 4.0 + font + 2.0),
            esc(&l)
        ));
    }
    for (v, l) in y.ticks() {
        let py = y.map(v);
        if py < f.y - 0.5 || py > f.y + f.h + 0.5 {
            continue;
        }
        out.push_str(&format!(
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#e3e3e3\"/><text x=\"{3}\" y=\"{4}\" text-anchor=\"end\" font-size=\"{font}\">{5}</text>",
            c(f.x - 4.0),
            c(py),
            c(f.x + f.w),
            c(f.x - 6.0),
            c(py + font * 0.35),
            esc(&l)
        ));
    }
    out.push_str(&format!(
        "<path d=\"M{} {}V{}H{}\" fill=\"none\" stroke=\"#555555\"/>",
        c(f.x),
        c(f.y),
        c(f.y + f.h),
        c(f.x + f.w)
    ));
    if !xlabel.is_empty() {
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{font}\">{}</text>",
            c(f.x + f.w / 2.0),
            c(f.y + f.h + 2.0 * font + 10.0),
            esc(xlabel)
        ));
    }
    if !ylabel.is_empty() {
        let (tx, ty) = (f.x - 3.6 * font - 8.0, f.y + f.h / 2.0);
        out.push_str(&format!(
            "<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" font-size=\"{font}\" transform=\"rotate(-90 {0} {1})\">{2}</text>",
            c(tx),
            c(ty),
            esc(ylabel)
        ));
    }
    out.push_str("</g>");
}
