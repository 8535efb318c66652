//! Searches of services whose limit is known, side by side (docs/capacity.md,
//! "Measured": `scripts/bench-capacity`'s services, their documents saved
//! under `docs/results/capacity/`): each capacity beside what the service's
//! configuration implies, how far off, how wide its bracket, how long the
//! search took, what the fit named and how the search ended.

use iolab_model::capacity::Search;

use crate::grid::Grid;
use crate::numbers::{num, opt, secs};

/// What a service's configuration implies its capacity is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Implied {
    /// Set by its configuration: threads or workers over the time each
    /// request holds one (`20 / 0.1 s = 200/s`).
    Configured(f64),
    /// One core over the CPU per request the search measured.
    OneCore,
}

impl Implied {
    /// The rate, and how it was had; `None` when the search measured no
    /// CPU per request.
    fn of(self, s: &Search) -> Option<(f64, &'static str)> {
        match self {
            Implied::Configured(v) => Some((v, "configured")),
            Implied::OneCore => {
                let ms = s.fit.as_ref()?.cpu_per_request_ms.filter(|m| *m > 0.0)?;
                Some((1000.0 / ms, "1 core / CPU per request"))
            }
        }
    }
}

/// One row per (service, its search, what its configuration implies).
pub fn known(rows: &[(String, &Search, Implied)]) -> Grid {
    let mut g = Grid::new(
        &[
            "service",
            "capacity (req/s)",
            "implied (req/s)",
            "error",
            "bracket",
            "steps",
            "search took",
            "fit",
            "outcome",
        ],
        &[false, true, true, true, true, true, true, false, false],
    );
    for (name, s, implied) in rows {
        let implied = implied.of(s);
        let error = match (s.capacity_rps, implied) {
            (Some(c), Some((i, _))) => format!("{:+.1}%", (c - i) / i * 100.0),
            _ => "-".into(),
        };
        g.rows.push(vec![
            name.clone(),
            opt(s.capacity_rps, |v| num(v, 1)),
            opt(implied, |(v, how)| format!("{} ({how})", num(v, 1))),
            error,
            opt(s.bracket_width_pct, |v| format!("{}%", num(v, 1))),
            s.steps.len().to_string(),
            secs(s.elapsed_s),
            opt(s.fit.as_ref(), |f| {
                format!("{}: {}", f.binding.resource, f.model)
            }),
            // How the search ended says whether the row is a capacity at all
            // (a search the generator or the machine stopped is a lower bound).
            s.outcome.clone(),
        ]);
    }
    g
}
