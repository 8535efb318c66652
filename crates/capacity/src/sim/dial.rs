//! The noise a [`SimBench`](super::SimBench) is dialled to, in bench time
//! (seconds since its first step), turned into each run's
//! [`Noise`](iolab_predict::sim::noise::Noise): the same pauses and slow
//! windows whatever the steps, each run's spread drawn from its own seed.

use iolab_predict::sim::noise::{Noise, Slow};

/// Noise, dialled.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dial {
    /// Seed of every draw (the same seed, the same search).
    pub seed: u64,
    /// Coefficient of variation of each step of a request's work.
    pub spread: f64,
    /// Pauses in which the service does nothing (a GC's), when any.
    pub pauses: Option<Pauses>,
    /// A while in which the CPU is slower, when any.
    pub slow: Option<SlowCpu>,
    /// A while in which another process shares the target's cores, when
    /// any.
    pub neighbour: Option<Neighbour>,
}

/// A pause about every `every_s` (each moved by up to a quarter of it),
/// lasting between `min_ms` and `max_ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pauses {
    /// Mean time between pauses, s.
    pub every_s: f64,
    /// Shortest pause, ms.
    pub min_ms: f64,
    /// Longest pause, ms.
    pub max_ms: f64,
}

/// From `from_s` for `for_s`, the CPU `factor` times slower.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlowCpu {
    /// Start, bench time, s.
    pub from_s: f64,
    /// How long, s.
    pub for_s: f64,
    /// How many times slower.
    pub factor: f64,
}

/// From `from_s` for `for_s`, another process takes `share` of the
/// target's cores (a build, a busy loop pinned beside it): the service's
/// CPU work gets `1 - share` of them, so it runs `1 / (1 - share)` times
/// slower, and the machine's watch reads the neighbour as the real one
/// does (`crates/capacity/src/neighbours.rs`): others ran `share` of each
/// second, and the target's busiest thread waited that share for a CPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Neighbour {
    /// Start, bench time, s.
    pub from_s: f64,
    /// How long, s.
    pub for_s: f64,
    /// The share of the cores it takes, in (0, 1).
    pub share: f64,
}

impl Neighbour {
    /// Whether bench time `t` lies inside it.
    pub fn at(&self, t: f64) -> bool {
        t >= self.from_s && t < self.from_s + self.for_s
    }

    /// The slow window it makes of the service's CPU.
    fn as_slow(&self) -> SlowCpu {
        SlowCpu {
            from_s: self.from_s,
            for_s: self.for_s,
            factor: 1.0 / (1.0 - self.share.clamp(0.0, 0.99)),
        }
    }
}

/// A uniform draw in [0, 1) from `seed` and `k` (splitmix64).
pub fn unit(seed: u64, k: u64) -> f64 {
    let mut z = seed
        .wrapping_add(k.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

fn ns(s: f64) -> u64 {
    (s.max(0.0) * 1e9).round() as u64
}

impl Dial {
    /// No noise at all.
    pub fn quiet(seed: u64) -> Dial {
        Dial {
            seed,
            ..Dial::default()
        }
    }

    /// The share of time the pauses take, on average.
    pub fn paused_share(&self) -> f64 {
        self.pauses
            .map_or(0.0, |p| (p.min_ms + p.max_ms) / 2.0 / 1000.0 / p.every_s)
    }

    /// Pause windows `[from, to)` in bench time, s, that meet `[t0, t1)`.
    pub fn pauses_between(&self, t0: f64, t1: f64) -> Vec<(f64, f64)> {
        let Some(p) = self.pauses.filter(|p| p.every_s > 0.0) else {
            return Vec::new();
        };
        let first = ((t0 / p.every_s).floor() as i64 - 1).max(1) as u64;
        let last = (t1 / p.every_s).ceil() as u64 + 1;
        (first..=last)
            .filter_map(|k| {
                let at = (k as f64 + 0.5 * (unit(self.seed, 2 * k) - 0.5)) * p.every_s;
                let ms = p.min_ms + (p.max_ms - p.min_ms) * unit(self.seed, 2 * k + 1);
                let end = at + ms / 1000.0;
                (end > t0 && at < t1).then_some((at, end))
            })
            .collect()
    }

    /// Run `run`'s noise, from bench time `t0` for `horizon_s`, the server
    /// first busy `backlog_s` with what earlier steps left.
    pub fn noise(&self, run: u64, t0: f64, horizon_s: f64, backlog_s: f64) -> Noise {
        let mut stalls: Vec<(u64, u64)> = self
            .pauses_between(t0, t0 + horizon_s)
            .into_iter()
            .map(|(a, b)| (ns(a - t0), ns(b - t0)))
            .collect();
        if backlog_s > 0.0 {
            stalls.push((0, ns(backlog_s)));
        }
        stalls.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (a, b) in stalls {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        // A slow CPU and a neighbour are dialled apart: the noise slows by
        // the first window holding a moment, so they are not meant to meet.
        let slow = self
            .slow
            .into_iter()
            .chain(self.neighbour.map(|n| n.as_slow()))
            .filter(|s| s.from_s + s.for_s > t0 && s.from_s < t0 + horizon_s)
            .map(|s| Slow {
                from_ns: ns(s.from_s - t0),
                to_ns: ns(s.from_s + s.for_s - t0),
                factor: s.factor,
            });
        Noise {
            seed: self.seed ^ run.wrapping_mul(0xa076_1d64_78bd_642f),
            spread: self.spread,
            stalls: merged,
            slow: slow.collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_come_about_as_often_as_dialled_and_a_run_sees_them_from_its_start() {
        let d = Dial {
            seed: 3,
            pauses: Some(Pauses {
                every_s: 2.0,
                min_ms: 50.0,
                max_ms: 200.0,
            }),
            ..Dial::default()
        };
        let p = d.pauses_between(0.0, 100.0);
        assert!((45..=52).contains(&p.len()), "{}", p.len());
        assert!(p.iter().all(|(a, b)| (0.049..=0.201).contains(&(b - a))));
        assert!((d.paused_share() - 0.0625).abs() < 1e-9);
        // A run from 10 s sees them at their offsets, and a backlog first.
        let n = d.noise(1, 10.0, 5.0, 0.3);
        assert_eq!(n.stalls[0].0, 0);
        assert!(n.stalls[0].1 >= ns(0.3));
        let seen = d.pauses_between(10.0, 15.0);
        assert!((seen.len().max(1)..=seen.len() + 1).contains(&n.stalls.len()));
        assert!(n.stalls.windows(2).all(|w| w[0].1 < w[1].0));
    }
}
