//! Hand-written SVG: scales and ticks ([`scale`]), axes ([`axis`]), line
//! plots ([`line`]), legends ([`legend`]) and the palette ([`palette`]).
//! Output is plain text with fixed number formatting, so charts are
//! byte-identical for the same data and readable without any script.

pub mod axis;
pub mod legend;
pub mod line;
pub mod palette;
pub mod scale;

/// Escape text for XML (element content and attribute values).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A coordinate with one decimal (stable, compact).
pub fn c(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let s = format!("{v:.1}");
    if s == "-0.0" {
        "0.0".into()
    } else {
        s
    }
}

/// A rectangle in SVG user units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// Left.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

/// The font stack every chart uses (system fonts only, nothing fetched).
pub const FONT: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";

/// Open an `<svg>` element of the given size with a title for screen readers.
pub fn open(w: f64, h: f64, title: &str) -> String {
    format!(
        "<svg class=\"chart\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" font-family=\"{FONT}\" font-size=\"12\"><title>{}</title><rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>",
        esc(title)
    )
}

/// Close an `<svg>` element.
pub fn close() -> &'static str {
    "</svg>"
}
