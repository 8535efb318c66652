//! A capacity search as a CI gate (`iolab capacity --baseline OLD.json
//! --max-drop 10%`): each search's answer against the same target's in an
//! earlier document; the gate fails when one fell by more than allowed.

use serde::{Deserialize, Serialize};

/// One target's answer against its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GateCheck {
    /// The search's name (the same in both documents).
    pub name: String,
    /// The baseline's capacity, req/s.
    pub baseline_rps: f64,
    /// This search's capacity, req/s (`None`: no rate met the objective).
    pub capacity_rps: Option<f64>,
    /// (baseline - capacity) / baseline, % (100 when nothing passed;
    /// negative when the capacity rose).
    pub drop_pct: f64,
    /// The drop is within the allowed one.
    pub passed: bool,
}

/// The gate's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Gate {
    /// The baseline document, as given.
    pub baseline: String,
    /// The largest drop allowed, %.
    pub max_drop_pct: f64,
    /// One check per search.
    pub checks: Vec<GateCheck>,
    /// Every check passed.
    pub passed: bool,
}

impl GateCheck {
    /// `capacity` against `baseline` with at most `max_drop_pct` lost.
    pub fn of(name: &str, baseline: f64, capacity: Option<f64>, max_drop_pct: f64) -> GateCheck {
        let drop_pct = match capacity {
            Some(c) => (baseline - c) / baseline * 100.0,
            None => 100.0,
        };
        GateCheck {
            name: name.to_string(),
            baseline_rps: baseline,
            capacity_rps: capacity,
            drop_pct,
            passed: drop_pct <= max_drop_pct,
        }
    }
}

impl super::CapacityFile {
    /// Every capacity it states is a rate a search can find: above 0 and
    /// at most [`MAX_RATE`](crate::limits::MAX_RATE) (issue 49 finding 19:
    /// a baseline of 0 passed any search "inf% above", one of 1e308 printed
    /// as 18,446,744,073,709,551,615/s). The field named is the first
    /// that is not.
    pub fn check_figures(&self) -> Result<(), crate::attack::FigureError> {
        let stated = std::iter::once(("capacity_rps", self.capacity_rps)).chain(
            self.searches
                .iter()
                .map(|s| ("searches[].capacity_rps", s.capacity_rps)),
        );
        for (field, rate) in stated {
            if let Some(value) = rate {
                if !(value > 0.0 && value <= crate::limits::MAX_RATE) {
                    return Err(crate::attack::FigureError {
                        field,
                        value,
                        rule: "a capacity is a rate above 0 and at most 10,000,000/s",
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drop_past_the_allowed_one_fails() {
        let ok = GateCheck::of("a", 200.0, Some(185.0), 10.0);
        assert!(ok.passed && (ok.drop_pct - 7.5).abs() < 1e-9);
        let bad = GateCheck::of("a", 200.0, Some(170.0), 10.0);
        assert!(!bad.passed && (bad.drop_pct - 15.0).abs() < 1e-9);
        let rose = GateCheck::of("a", 200.0, Some(260.0), 10.0);
        assert!(rose.passed && rose.drop_pct < 0.0);
        let none = GateCheck::of("a", 200.0, None, 10.0);
        assert!(!none.passed && none.drop_pct == 100.0);
    }
}
