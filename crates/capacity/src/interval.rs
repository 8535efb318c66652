//! Where the capacity lies: the bracket widened by what the search was
//! unsure of.
//!
//! The bracket alone (the highest rate held, the lowest failed above it) is
//! as narrow as `--precision` asked, whatever the noise: a 5% bracket was
//! printed around each of five uvicorn answers from 370 to 2,160/s (issue
//! 51). Two things say how far a rerun may land from it:
//!
//! - **the precision**: a bisection stops one step from the edge, and a
//!   rerun's decisions near it fall either side, so each side is widened by
//!   the precision;
//! - **the decisions' own doubt**: near the edge, a rate whose windows
//!   disagreed (some met the objective, some missed) was decided by a
//!   narrow margin; the share of such rates widens each side by up to
//!   twice the precision more, and a pass above a fail (`noise`) stretches
//!   the interval over both.

use iolab_model::capacity::{Interval, Noise, StepRecord};

/// How far past the bracket, as a share of the precision, the edge's
/// doubt reaches at most (every rate near the edge split).
const DOUBT: f64 = 2.0;

/// The interval of a search whose answer is `capacity` with `failed` above
/// it, from its `steps` (the deciding ones carry their windows), its
/// `noise` and the `precision` it was asked for; `None` without both ends.
pub fn interval(
    capacity: Option<f64>,
    failed: Option<f64>,
    steps: &[StepRecord],
    noise: &[Noise],
    precision: f64,
) -> Option<Interval> {
    let (c, f) = (capacity?, failed?);
    let near = |r: f64| r >= c * (1.0 - 2.0 * precision) && r <= f * (1.0 + 2.0 * precision);
    let decided: Vec<_> = steps
        .iter()
        .filter(|s| near(s.rate_rps))
        .filter_map(|s| s.windows)
        .collect();
    let split = decided
        .iter()
        .filter(|w| w.passed > 0 && w.failed > 0)
        .count();
    let doubt = split as f64 / decided.len().max(1) as f64;
    let widen = precision * (1.0 + DOUBT * doubt);
    let mut low = c * (1.0 - widen);
    let mut high = f * (1.0 + widen);
    for n in noise {
        low = low.min(n.failed_rps);
        high = high.max(n.passed_rps);
    }
    Some(Interval {
        low_rps: low.max(0.0),
        high_rps: high,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_model::capacity::Windows;

    fn decided(rate: f64, passed: u32, failed: u32) -> StepRecord {
        StepRecord {
            rate_rps: rate,
            windows: Some(Windows {
                passed,
                failed,
                most: 4,
                allowed: 1,
                held: failed <= 1,
            }),
            ..StepRecord::default()
        }
    }

    /// Unanimous windows: the bracket and a precision each side; split
    /// windows at every rate near the edge: three times that.
    #[test]
    fn split_windows_at_the_edge_widen_the_interval() {
        let quiet = [decided(100.0, 3, 0), decided(105.0, 0, 2)];
        let i = interval(Some(100.0), Some(105.0), &quiet, &[], 0.05).unwrap();
        assert!((i.low_rps - 95.0).abs() < 1e-9 && (i.high_rps - 110.25).abs() < 1e-9);
        let split = [decided(100.0, 3, 1), decided(105.0, 2, 2)];
        let j = interval(Some(100.0), Some(105.0), &split, &[], 0.05).unwrap();
        assert!((j.low_rps - 85.0).abs() < 1e-9, "{j:?}");
        // A pass above a fail is inside it.
        let noise = [Noise {
            passed_rps: 130.0,
            failed_rps: 90.0,
        }];
        let k = interval(Some(100.0), Some(105.0), &quiet, &noise, 0.05).unwrap();
        assert_eq!((k.low_rps, k.high_rps), (90.0, 130.0));
        assert_eq!(interval(Some(100.0), None, &quiet, &[], 0.05), None);
    }
}
