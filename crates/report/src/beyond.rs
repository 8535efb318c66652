//! Predictions far above what was measured. A what-if whose capacity is
//! more than [`FACTOR`] times the highest rate the fitted service passed
//! runs the fitted network where nothing was measured, on the CPU per
//! request read at the lower rates; what a request costs there changes
//! with the rate and the model (batching, another scheduler), so the
//! report says which predictions are extrapolations, beside their numbers.
//! The quiet pairs of `iolab whatif` (CHANGELOG.md, 2026-11-27) are why: the one
//! predicted at A's own rates was within 6%, those 3x to 33x beyond it
//! erred by 21% to 79%.

use crate::numbers::{num, rate};

/// How far above the highest passing rate a prediction is an extrapolation.
pub const FACTOR: f64 = 2.0;

/// A prediction more than [`FACTOR`] times the highest passing rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Beyond {
    /// The change, as the table names it.
    pub change: String,
    /// Its predicted capacity, req/s.
    pub predicted_rps: f64,
    /// predicted / measured.
    pub times: f64,
}

/// The predictions among `predicted` (change, capacity) above [`FACTOR`]
/// times `measured_rps`, the highest rate the service passed.
fn beyond<'a>(
    measured_rps: Option<f64>,
    predicted: impl Iterator<Item = (&'a str, Option<f64>)>,
) -> Vec<Beyond> {
    let Some(m) = measured_rps.filter(|m| *m > 0.0) else {
        return Vec::new();
    };
    predicted
        .filter_map(|(change, p)| {
            let p = p?;
            (p > FACTOR * m).then(|| Beyond {
                change: change.to_string(),
                predicted_rps: p,
                times: p / m,
            })
        })
        .collect()
}

/// One sentence naming the predictions among `predicted` (change,
/// capacity) that are extrapolations from `measured_rps`, the highest rate
/// the service passed; `None` when there are none.
pub fn line<'a>(
    measured_rps: Option<f64>,
    predicted: impl Iterator<Item = (&'a str, Option<f64>)>,
) -> Option<String> {
    let m = measured_rps?;
    let found = beyond(measured_rps, predicted);
    if found.is_empty() {
        return None;
    }
    let list: Vec<String> = found
        .iter()
        .map(|b| {
            format!(
                "{} {}/s ({}x)",
                b.change,
                rate(b.predicted_rps),
                num(b.times, 1)
            )
        })
        .collect();
    Some(format!(
        "extrapolated: {} predicted above {}x the highest rate measured to pass ({}/s), on the CPU per request read at up to that rate; a request's cost changes with the rate and the model, so measure before relying on {}",
        list.join(", "),
        num(FACTOR, 0),
        rate(m),
        if found.len() == 1 { "it" } else { "them" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_predictions_above_twice_the_measured_rate_are_named_with_their_factor() {
        let predicted = [
            ("as fitted", Some(525.0)),
            ("virtual threads", Some(1_939.0)),
            ("twice the threads", Some(1_050.0)),
            ("unknown", None),
        ];
        let found = beyond(Some(525.0), predicted.iter().map(|(c, p)| (*c, *p)));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].change, "virtual threads");
        assert!((found[0].times - 1_939.0 / 525.0).abs() < 1e-12);
        let text = line(Some(525.0), predicted.iter().map(|(c, p)| (*c, *p))).unwrap();
        // 1,939 / 525 = 3.69: one decimal.
        assert!(text.starts_with("extrapolated: virtual threads 1,939/s (3.7x) predicted above 2x the highest rate measured to pass (525/s)"), "{text}");
        assert!(text.ends_with("relying on it"), "{text}");
    }

    #[test]
    fn nothing_measured_or_nothing_beyond_says_nothing() {
        let p = [("loop", Some(10_000.0))];
        assert!(beyond(None, p.iter().map(|(c, p)| (*c, *p))).is_empty());
        assert!(beyond(Some(0.0), p.iter().map(|(c, p)| (*c, *p))).is_empty());
        assert_eq!(line(Some(525.0), [("x2", Some(1_050.0))].into_iter()), None);
        assert_eq!(line(None, p.iter().map(|(c, p)| (*c, *p))), None);
        assert!(beyond(Some(5_000.0), p.iter().map(|(c, p)| (*c, *p))).is_empty());
    }
}
