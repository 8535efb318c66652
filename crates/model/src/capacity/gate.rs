//! A capacity search as a CI gate (`iolab capacity --baseline OLD.json
//! --max-drop 10%`): each search's answer against the same target's in an
//! earlier document; the gate fails when one fell by more than allowed and
//! the fall is larger than the noise: when both documents have intervals,
//! a drop past the allowed one whose intervals still meet is within the
//! noise (a rerun of an unchanged service lands anywhere in its interval),
//! and passes, said so. Points alone fail a gate on an unchanged service
//! as often as one search's noise reaches past the allowed drop.

use serde::{Deserialize, Serialize};

use super::Interval;

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
    /// The drop is within the allowed one, or within the noise.
    pub passed: bool,
    /// The baseline's interval, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_interval: Option<Interval>,
    /// This search's interval, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// The drop is past the allowed one, but the two intervals meet: it is
    /// within the noise, and the check passed for that reason.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub within_noise: bool,
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
            baseline_interval: None,
            interval: None,
            within_noise: false,
        }
    }

    /// [`GateCheck::of`], then held to the intervals when both are known:
    /// a drop past the allowed one whose intervals meet (this search's
    /// high end at or above the baseline's low end) passes as within the
    /// noise.
    pub fn with_intervals(self, baseline: Option<Interval>, now: Option<Interval>) -> GateCheck {
        let meet = match (baseline, now) {
            (Some(b), Some(n)) => n.high_rps >= b.low_rps,
            _ => false,
        };
        let within_noise = !self.passed && self.capacity_rps.is_some() && meet;
        GateCheck {
            passed: self.passed || within_noise,
            baseline_interval: baseline,
            interval: now,
            within_noise,
            ..self
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

    fn i(low_rps: f64, high_rps: f64) -> Option<Interval> {
        Some(Interval { low_rps, high_rps })
    }

    #[test]
    fn a_drop_within_the_noise_passes_and_a_real_one_fails() {
        // 15% below, but 170's interval (150-195) meets 200's (185-220).
        let noise = GateCheck::of("a", 200.0, Some(170.0), 10.0)
            .with_intervals(i(185.0, 220.0), i(150.0, 195.0));
        assert!(noise.passed && noise.within_noise, "{noise:?}");
        // 30% below, and 140's interval (130-150) ends under 185.
        let real = GateCheck::of("a", 200.0, Some(140.0), 10.0)
            .with_intervals(i(185.0, 220.0), i(130.0, 150.0));
        assert!(!real.passed && !real.within_noise, "{real:?}");
        // Within the allowed drop: passed, not for the noise.
        let ok = GateCheck::of("a", 200.0, Some(190.0), 10.0)
            .with_intervals(i(185.0, 220.0), i(175.0, 205.0));
        assert!(ok.passed && !ok.within_noise);
        // An interval missing on either side: the points decide.
        let old =
            GateCheck::of("a", 200.0, Some(170.0), 10.0).with_intervals(None, i(150.0, 195.0));
        assert!(!old.passed && !old.within_noise);
        // Nothing passed: no interval saves it.
        let none = GateCheck::of("a", 200.0, None, 10.0).with_intervals(i(185.0, 220.0), None);
        assert!(!none.passed);
    }
}
