//! The Okabe-Ito palette: eight colours told apart with any colour vision,
//! and a marker shape per series so print in grey still works, drawn by
//! [`marker_svg`] (in the charts and their legends alike).

use super::{c, esc};

/// Okabe-Ito, in the order series take them (yellow last: weak on white).
pub const COLOURS: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442",
];

/// Colour of the `i`-th series.
pub fn colour(i: usize) -> &'static str {
    COLOURS[i % COLOURS.len()]
}

/// Marker shapes, in series order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// Filled circle.
    Circle,
    /// Filled square.
    Square,
    /// Triangle pointing up.
    Triangle,
    /// Diamond.
    Diamond,
    /// Triangle pointing down.
    Down,
    /// Plus sign.
    Cross,
}

/// Marker of the `i`-th series.
pub fn marker(i: usize) -> Marker {
    const ALL: [Marker; 6] = [
        Marker::Circle,
        Marker::Square,
        Marker::Triangle,
        Marker::Diamond,
        Marker::Down,
        Marker::Cross,
    ];
    ALL[i % ALL.len()]
}

/// SVG of one marker at `(x, y)`, with a tooltip when `tip` is not empty.
pub fn marker_svg(m: Marker, x: f64, y: f64, fill: &str, hollow: bool, tip: &str) -> String {
    let paint = if hollow {
        format!("fill=\"#ffffff\" stroke=\"{fill}\" stroke-width=\"1.5\"")
    } else {
        format!("fill=\"{fill}\" stroke=\"#ffffff\" stroke-width=\"0.8\"")
    };
    let title = if tip.is_empty() {
        String::new()
    } else {
        format!("<title>{}</title>", esc(tip))
    };
    let r = 4.0;
    let shape = match m {
        Marker::Circle => format!(
            "<circle cx=\"{}\" cy=\"{}\" r=\"{r}\" {paint}>{title}</circle>",
            c(x),
            c(y)
        ),
        Marker::Square => format!(
            "<rect x=\"{}\" y=\"{}\" width=\"7\" height=\"7\" {paint}>{title}</rect>",
            c(x - 3.5),
            c(y - 3.5)
        ),
        Marker::Triangle => poly(
            &[(x, y - r - 0.5), (x + r, y + r * 0.8), (x - r, y + r * 0.8)],
            &paint,
            &title,
        ),
        Marker::Down => poly(
            &[(x, y + r + 0.5), (x + r, y - r * 0.8), (x - r, y - r * 0.8)],
            &paint,
            &title,
        ),
        Marker::Diamond => poly(
            &[(x, y - r - 1.0), (x + r, y), (x, y + r + 1.0), (x - r, y)],
            &paint,
            &title,
        ),
        Marker::Cross => format!(
            "<path d=\"M{} {}h8v3h-8zM{} {}h3v8h-3z\" {paint}>{title}</path>",
            c(x - 4.0),
            c(y - 1.5),
            c(x - 1.5),
            c(y - 4.0)
        ),
    };
    shape
}

fn poly(p: &[(f64, f64)], paint: &str, title: &str) -> String {
    let pts: Vec<String> = p
        .iter()
        .map(|(x, y)| format!("{},{}", c(*x), c(*y)))
        .collect();
    format!(
        "<polygon points=\"{}\" {paint}>{title}</polygon>",
        pts.join(" ")
    )
}
