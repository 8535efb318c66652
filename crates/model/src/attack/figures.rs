//! The figures of a document read back, held to what a run can produce:
//! issue 49 finding 19 rendered edited documents as they stood ("Duration
//! -5000.00ms", a p50 above the max, a capacity of 1e308 printed as
//! 18,446,744,073,709,551,615/s). Counts are checked by
//! [`AttackResult::check_accounting`]; times and rates here.

use super::AttackResult;

/// A percentile may sit above the max by HdrHistogram's rounding (its
/// values are bucket edges): 1%.
const ROUNDING: f64 = 1.01;

/// A figure no run produces.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field} is {value}: {rule}")]
pub struct FigureError {
    /// The field, as the document names it.
    pub field: &'static str,
    /// Its value.
    pub value: f64,
    /// What it must be.
    pub rule: &'static str,
}

/// `value` finite and at least 0.
pub fn non_negative(field: &'static str, value: f64) -> Result<(), FigureError> {
    match value.is_finite() && value >= 0.0 {
        true => Ok(()),
        false => Err(FigureError {
            field,
            value,
            rule: "a time or rate is a finite number, at least 0",
        }),
    }
}

/// Each of `figures` (named, in order) non-negative and at most the next
/// (within [`ROUNDING`]).
fn ordered(figures: &[(&'static str, f64)]) -> Result<(), FigureError> {
    for (field, v) in figures {
        non_negative(field, *v)?;
    }
    for pair in figures.windows(2) {
        let ((field, a), (_, b)) = (pair[0], pair[1]);
        if a > b * ROUNDING + 1e-3 {
            return Err(FigureError {
                field,
                value: a,
                rule: "percentiles rise from min to max",
            });
        }
    }
    Ok(())
}

impl AttackResult {
    /// Its times hold together: an elapsed time at least 0 (above 0 when
    /// something was sent), latency and service percentiles finite and
    /// rising to their max.
    pub fn check_figures(&self) -> Result<(), FigureError> {
        non_negative("elapsed_s", self.elapsed_s)?;
        if self.elapsed_s == 0.0 && self.requests.sent > 0 {
            return Err(FigureError {
                field: "elapsed_s",
                value: 0.0,
                rule: "requests were sent, so the run took some time",
            });
        }
        let l = &self.latency_ms;
        ordered(&[
            ("latency_ms.min", l.min),
            ("latency_ms.p50", l.p50),
            ("latency_ms.p90", l.p90),
            ("latency_ms.p95", l.p95),
            ("latency_ms.p99", l.p99),
            ("latency_ms.p999", l.p999),
            ("latency_ms.max", l.max),
        ])?;
        non_negative("latency_ms.mean", l.mean)?;
        let s = &self.service_ms;
        ordered(&[
            ("service_ms.p50", s.p50),
            ("service_ms.p99", s.p99),
            ("service_ms.max", s.max),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r38_19_negative_elapsed_and_p50_above_max_are_named() {
        let mut a = AttackResult::default();
        assert!(a.check_figures().is_ok());
        a.elapsed_s = -5.0;
        assert_eq!(a.check_figures().unwrap_err().field, "elapsed_s");
        a.elapsed_s = 1.0;
        a.latency_ms.p50 = 50.0;
        a.latency_ms.max = 10.0;
        assert_eq!(a.check_figures().unwrap_err().field, "latency_ms.p50");
        a.latency_ms.p50 = f64::NAN;
        assert!(a.check_figures().is_err());
    }
}
