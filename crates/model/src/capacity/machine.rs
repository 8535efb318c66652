//! The machine's noise through one search ([`Machine`]): how far the CPU's
//! speed moved on the generator's and the target's cores, and the CPU
//! steal a hypervisor took. A capacity is only as precise as the machine
//! it was measured on was steady: on this project's 2-core VMs a fixed
//! loop's speed moved 41-76% through one pair of searches (issue 47), so a
//! search that asked for 5% and ran through such a move did not measure
//! 5%. The search records what it saw; [`Machine::allows`] says whether
//! that was steady enough for the precision asked, and
//! [`Machine::widen`] how far the interval reaches when it was not.

use serde::{Deserialize, Serialize};

use super::Interval;
use crate::cpu_speed::CpuSpeed;

/// What the machine did through a search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Machine {
    /// A fixed loop timed on the generator's cores through the search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_cpu: Option<CpuSpeed>,
    /// The same loop on the target's cores, when it was pinned to them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_cpu: Option<CpuSpeed>,
    /// CPU steal through the search, % of the machine's CPU time
    /// (`/proc/stat`); `None` where it cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_pct: Option<f64>,
    /// The precision the search asked for, %: what the machine is held to.
    #[serde(default)]
    pub asked_pct: f64,
}

impl Machine {
    /// How far the CPU's speed moved, %: the larger of both places';
    /// `None` when neither was timed.
    pub fn moved_pct(&self) -> Option<f64> {
        [&self.generator_cpu, &self.target_cpu]
            .into_iter()
            .flatten()
            .map(CpuSpeed::spread_pct)
            .reduce(f64::max)
    }

    /// How far a capacity measured through this may sit from a rerun's, as
    /// a share: half the speed's move (a rate read at either end of it is
    /// that far from the middle) plus the steal, which took that share of
    /// the CPU away at times the search did not see.
    pub fn reach(&self) -> f64 {
        self.moved_pct().unwrap_or(0.0) / 200.0 + self.steal_pct.unwrap_or(0.0) / 100.0
    }

    /// The machine was steady enough for the precision asked
    /// ([`Machine::asked_pct`]): its [`Machine::reach`] is within it.
    pub fn allows(&self) -> bool {
        self.reach() <= self.asked_pct / 100.0
    }

    /// `interval` stretched to the reach either side of its ends, when the
    /// machine did not allow the precision asked.
    pub fn widen(&self, interval: Interval) -> Interval {
        if self.allows() {
            return interval;
        }
        let r = self.reach();
        Interval {
            low_rps: (interval.low_rps * (1.0 - r)).max(0.0),
            high_rps: interval.high_rps * (1.0 + r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn speed(p10_ms: f64, p90_ms: f64) -> Option<CpuSpeed> {
        Some(CpuSpeed {
            timings: 40,
            p10_ms,
            p50_ms: (p10_ms + p90_ms) / 2.0,
            p90_ms,
        })
    }

    #[test]
    fn a_steady_machine_allows_the_precision_and_leaves_the_interval() {
        let m = Machine {
            generator_cpu: speed(1.0, 1.06),
            target_cpu: None,
            steal_pct: Some(0.5),
            asked_pct: 5.0,
        };
        assert!((m.reach() - 0.035).abs() < 1e-9);
        assert!(m.allows());
        let i = Interval {
            low_rps: 90.0,
            high_rps: 110.0,
        };
        assert_eq!(m.widen(i), i);
    }

    #[test]
    fn a_cpu_that_moved_45_percent_widens_the_interval_by_half_of_it() {
        let m = Machine {
            generator_cpu: speed(1.0, 1.1),
            target_cpu: speed(1.0, 1.45),
            steal_pct: None,
            asked_pct: 5.0,
        };
        assert!((m.moved_pct().unwrap() - 45.0).abs() < 1e-9);
        assert!(!m.allows());
        let w = m.widen(Interval {
            low_rps: 2900.0,
            high_rps: 3100.0,
        });
        assert!((w.low_rps - 2900.0 * 0.775).abs() < 1e-6, "{w:?}");
        assert!((w.high_rps - 3100.0 * 1.225).abs() < 1e-6, "{w:?}");
    }

    #[test]
    fn nothing_read_is_no_noise_said() {
        let m = Machine {
            asked_pct: 5.0,
            ..Machine::default()
        };
        assert_eq!(m.moved_pct(), None);
        assert!(m.allows());
    }
}
