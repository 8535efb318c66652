//! The `--baseline` gate's verdict in one line: each search against its
//! baseline, and the intervals a drop was held to.

use iolab_model::capacity::Gate;

use crate::numbers::{num, opt, rate};

/// The gate's verdict in one line, e.g. `gate FAILED against base.json: url
/// 170/s, 15.0% below the baseline's 200/s (at most 10% allowed)`.
pub fn gate_line(g: &Gate) -> String {
    let each: Vec<String> = g
        .checks
        .iter()
        .map(|c| {
            let now = opt(c.capacity_rps, |r| format!("{}/s", rate(r)));
            let how = if c.drop_pct >= 0.0 {
                format!("{}% below", num(c.drop_pct, 1))
            } else {
                format!("{}% above", num(-c.drop_pct, 1))
            };
            let verdict = match (c.passed, c.within_noise, c.baseline_interval, c.interval) {
                (true, true, Some(b), Some(n)) => format!(
                    " (within the noise: {}-{}/s meets the baseline's {}-{}/s)",
                    rate(n.low_rps),
                    rate(n.high_rps),
                    rate(b.low_rps),
                    rate(b.high_rps)
                ),
                (true, _, _, _) => String::new(),
                (false, _, Some(b), Some(n)) => format!(
                    " (FAILED: {}-{}/s is below the baseline's {}-{}/s)",
                    rate(n.low_rps),
                    rate(n.high_rps),
                    rate(b.low_rps),
                    rate(b.high_rps)
                ),
                (false, _, _, _) => " (FAILED)".into(),
            };
            format!(
                "{} {now}, {how} the baseline's {}/s{verdict}",
                c.name,
                rate(c.baseline_rps),
            )
        })
        .collect();
    format!(
        "gate {} against {}: {} (at most {}% allowed)",
        if g.passed { "passed" } else { "FAILED" },
        g.baseline,
        each.join("; "),
        num(g.max_drop_pct, 1)
    )
}
