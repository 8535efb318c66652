//! How steady the machine's CPU was while something was measured
//! ([`CpuSpeed`]): `iolab whatif` reads one through each pair, `iolab
//! capacity` one through each search.

use serde::{Deserialize, Serialize};

/// How steady the machine's CPU was through a pair: a fixed amount of work
/// timed by its thread's CPU clock, every quarter second, on the
/// generator's cores. B is predicted from A's cost read a minute before
/// it: on a virtual machine whose CPU changed speed by the second (one ran
/// a fixed loop in 9-18 ms over 20 s, idle), a CPU-bound B's error is the
/// machine's as much as the lab's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuSpeed {
    /// How many times the work was timed.
    pub timings: u32,
    /// The fast tenth's time, ms.
    pub p10_ms: f64,
    /// The median time, ms.
    pub p50_ms: f64,
    /// The slow tenth's time, ms.
    pub p90_ms: f64,
}

impl CpuSpeed {
    /// Fewest timings read as a speed.
    pub const MIN_TIMINGS: usize = 10;

    /// The reading of `timings_ms`; `None` with fewer than
    /// [`CpuSpeed::MIN_TIMINGS`].
    pub fn of(timings_ms: &[f64]) -> Option<CpuSpeed> {
        if timings_ms.len() < Self::MIN_TIMINGS {
            return None;
        }
        let mut s = timings_ms.to_vec();
        s.sort_by(f64::total_cmp);
        let q = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
        Some(CpuSpeed {
            timings: s.len() as u32,
            p10_ms: q(0.1),
            p50_ms: q(0.5),
            p90_ms: q(0.9),
        })
    }

    /// How far the speed moved, %: the slow tenth's time over the fast
    /// tenth's (the tails are a thread preempted or woken late, not the
    /// CPU's speed).
    pub fn spread_pct(&self) -> f64 {
        if self.p10_ms > 0.0 {
            (self.p90_ms / self.p10_ms - 1.0) * 100.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spread is the slow tenth's time over the fast tenth's; too few
    /// timings are no reading.
    #[test]
    fn the_cpu_speed_spread_is_the_slow_tenth_over_the_fast_tenth() {
        let timings: Vec<f64> = (1..=11).map(f64::from).collect();
        let speed = CpuSpeed::of(&timings).unwrap();
        assert_eq!((speed.p10_ms, speed.p50_ms, speed.p90_ms), (2.0, 6.0, 10.0));
        assert_eq!(speed.timings, 11);
        assert_eq!(speed.spread_pct(), 400.0);
        assert_eq!(CpuSpeed::of(&[2.0; 12]).unwrap().spread_pct(), 0.0);
        assert_eq!(CpuSpeed::of(&[1.0, 5.0]), None);
    }
}
