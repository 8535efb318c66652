//! Noise a simulated run can be given. Without it a request's work takes
//! exactly its steps' times, so a simulated step passes up to its capacity
//! and fails past it; a measured service is noisier, and the logic that
//! reads its steps (a capacity search, the fit, the binding rules) is
//! tested against that noise, dialled:
//!
//! - **spread**: each leaf's time drawn log-normal about its own (the mean
//!   kept), a coefficient of variation given;
//! - **stalls**: windows in which nothing the service runs moves on (a
//!   garbage collector's pause; the backlog a failed step left): a CPU
//!   leaf's work waits them out, a wait that ends inside one is seen when
//!   it ends;
//! - **slow windows**: the CPU is `factor` times slower for a while (a
//!   neighbour on the host, a lower clock).
//!
//! Draws come from a seeded generator: the same seed, the same run.

/// What to disturb a run with (times in ns from the run's start).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Noise {
    /// Seed of the draws.
    pub seed: u64,
    /// Coefficient of variation of each leaf's time (0: none).
    pub spread: f64,
    /// `[from, to)` windows in which nothing runs, sorted, apart.
    pub stalls: Vec<(u64, u64)>,
    /// Windows in which the CPU is slower.
    pub slow: Vec<Slow>,
}

/// A window in which each CPU leaf started takes `factor` times as long.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slow {
    /// Start, ns.
    pub from_ns: u64,
    /// End, ns.
    pub to_ns: u64,
    /// How many times slower (1: not).
    pub factor: f64,
}

impl Noise {
    /// When a leaf of `ns` started at `now` ends (CPU work waits out the
    /// stalls; a wait ending in one is seen at its end).
    pub(super) fn leaf_end(&self, draws: &mut Draws, now: u64, ns: u64, cpu: bool) -> u64 {
        let mut d = ns as f64 * draws.factor(self.spread);
        if cpu {
            let slow = self
                .slow
                .iter()
                .find(|s| (s.from_ns..s.to_ns).contains(&now));
            d *= slow.map_or(1.0, |s| s.factor.max(0.01));
        }
        let d = d.round().max(0.0) as u64;
        if cpu {
            self.cpu_end(now, d)
        } else {
            let end = now + d;
            self.stalls
                .iter()
                .find(|(a, b)| (*a..*b).contains(&end))
                .map_or(end, |(_, b)| *b)
        }
    }

    /// Of `[a, b)`, the ns outside every stall (a stalled core computes
    /// nothing, so it is not counted busy).
    pub(super) fn running_ns(&self, a: u64, b: u64) -> u64 {
        let stalled: u64 = self
            .stalls
            .iter()
            .map(|&(x, y)| y.min(b).saturating_sub(x.max(a)))
            .sum();
        (b - a).saturating_sub(stalled)
    }

    /// `work` ns of CPU from `start`, none of it in a stall.
    fn cpu_end(&self, start: u64, work: u64) -> u64 {
        let (mut at, mut left) = (start, work);
        for &(a, b) in &self.stalls {
            if b <= at {
                continue;
            }
            if a >= at + left {
                break;
            }
            left -= a.saturating_sub(at);
            at = b;
        }
        at + left
    }
}

/// The seeded draws of one run (splitmix64, Box-Muller).
#[derive(Debug, Clone)]
pub(super) struct Draws {
    state: u64,
}

impl Draws {
    pub(super) fn new(seed: u64) -> Draws {
        Draws {
            state: seed ^ 0x9e37_79b9_7f4a_7c15,
        }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1).
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A log-normal factor of mean 1 and coefficient of variation `cv`.
    fn factor(&mut self, cv: f64) -> f64 {
        if cv <= 0.0 {
            return 1.0;
        }
        let s2 = (1.0 + cv * cv).ln();
        let z = (-2.0 * self.unit().ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos();
        (s2.sqrt() * z - s2 / 2.0).exp().clamp(0.02, 50.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_waits_out_a_stall_and_a_wait_is_seen_at_its_end() {
        let n = Noise {
            stalls: vec![(10, 20), (30, 40)],
            ..Noise::default()
        };
        let mut d = Draws::new(1);
        // 15 ns of CPU from 5: 5 before the first stall, 10 after it.
        assert_eq!(n.leaf_end(&mut d, 5, 15, true), 30);
        // 30 ns: through both stalls.
        assert_eq!(n.leaf_end(&mut d, 5, 30, true), 55);
        // A wait ending at 12 is seen at 20; one ending at 25 at 25.
        assert_eq!(n.leaf_end(&mut d, 5, 7, false), 20);
        assert_eq!(n.leaf_end(&mut d, 5, 20, false), 25);
        // Started inside a stall: CPU waits for its end.
        assert_eq!(n.leaf_end(&mut d, 12, 5, true), 25);
        assert_eq!(n.running_ns(5, 35), 30 - 10 - 5);
        assert_eq!(n.running_ns(20, 30), 10);
    }

    #[test]
    fn the_spread_keeps_the_mean_and_a_slow_window_stretches_cpu_only() {
        let mut d = Draws::new(7);
        let draws: Vec<f64> = (0..20_000).map(|_| d.factor(0.5)).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        assert!((mean - 1.0).abs() < 0.02, "{mean}");
        assert!((var.sqrt() - 0.5).abs() < 0.05, "{}", var.sqrt());
        let n = Noise {
            slow: vec![Slow {
                from_ns: 0,
                to_ns: 100,
                factor: 2.0,
            }],
            ..Noise::default()
        };
        assert_eq!(n.leaf_end(&mut d, 10, 10, true), 30);
        assert_eq!(n.leaf_end(&mut d, 10, 10, false), 20);
        assert_eq!(n.leaf_end(&mut d, 100, 10, true), 110);
    }
}
