//! The Okabe-Ito palette: eight colours told apart with any colour vision,
//! and a marker shape per series so print in grey still works.

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
