//! Open-loop send times: constant (evenly spaced) or Poisson, over phases
//! whose rate moves linearly. Both are made the same way: points on the
//! "requests so far" axis (0, 1, 2, ... or cumulative exponential gaps) are
//! mapped back to time through the schedule's cumulative rate.

use iolab_model::driver::{Arrival, Phase};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// One phase on the cumulative axis.
#[derive(Debug, Clone)]
struct Segment {
    start_ns: f64,
    len_s: f64,
    from: f64,
    to: f64,
    /// Requests scheduled before this phase.
    before: f64,
    /// Requests this phase schedules.
    area: f64,
}

/// Yields send times in ns, in order.
#[derive(Debug)]
pub struct Arrivals {
    segments: Vec<Segment>,
    seg: usize,
    total: f64,
    /// Requests planned (constant) — the count `Driver::planned` gives.
    limit: u64,
    next_x: f64,
    made: u64,
    rng: Option<StdRng>,
}

impl Arrivals {
    /// The schedule of `phases` under `arrival`.
    pub fn new(phases: &[Phase], arrival: Arrival) -> Self {
        let mut segments = Vec::new();
        let (mut t, mut before) = (0.0, 0.0);
        for p in phases {
            let len_s = p.duration.as_secs_f64();
            let area = p.planned();
            segments.push(Segment {
                start_ns: t,
                len_s,
                from: p.from_rps,
                to: p.to_rps,
                before,
                area,
            });
            t += len_s * 1e9;
            before += area;
        }
        let mut rng = match arrival {
            Arrival::Constant => None,
            Arrival::Poisson { seed } => Some(StdRng::seed_from_u64(seed)),
        };
        let next_x = match rng.as_mut() {
            Some(r) => exp1(r),
            None => 0.0,
        };
        Arrivals {
            segments,
            seg: 0,
            total: before,
            limit: before.floor() as u64,
            next_x,
            made: 0,
            rng,
        }
    }

    fn time_of(&mut self, x: f64) -> Option<u64> {
        while self.seg < self.segments.len() {
            let s = &self.segments[self.seg];
            if x < s.before + s.area {
                let y = x - s.before;
                let t = if (s.to - s.from).abs() < 1e-12 {
                    y / s.from
                } else {
                    // y = from*t + k*t^2 with k = (to-from)/(2*len)
                    let k = (s.to - s.from) / (2.0 * s.len_s);
                    let disc = (s.from * s.from + 4.0 * k * y).max(0.0);
                    (-s.from + disc.sqrt()) / (2.0 * k)
                };
                return Some((s.start_ns + t.clamp(0.0, s.len_s) * 1e9) as u64);
            }
            self.seg += 1;
        }
        None
    }
}

fn exp1(r: &mut StdRng) -> f64 {
    let u: f64 = r.gen();
    -(1.0 - u).ln()
}

impl Iterator for Arrivals {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        if self.rng.is_none() && self.made >= self.limit {
            return None;
        }
        if self.next_x >= self.total {
            return None;
        }
        let x = self.next_x;
        self.next_x += match self.rng.as_mut() {
            Some(r) => exp1(r),
            None => 1.0,
        };
        self.made += 1;
        self.time_of(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn constant_is_evenly_spaced_and_counts_match_the_plan() {
        let a: Vec<u64> = Arrivals::new(
            &[Phase::hold(10.0, Duration::from_secs(2))],
            Arrival::Constant,
        )
        .collect();
        assert_eq!(a.len(), 20);
        assert_eq!(a[0], 0);
        assert_eq!(a[1], 100_000_000);
        assert_eq!(a[19], 1_900_000_000);
    }

    #[test]
    fn ramp_follows_the_area() {
        let ramp = Phase {
            duration: Duration::from_secs(10),
            from_rps: 0.0,
            to_rps: 100.0,
        };
        let a: Vec<u64> = Arrivals::new(&[ramp], Arrival::Constant).collect();
        assert_eq!(a.len(), 500);
        // half the requests (250) come after t = 10/sqrt(2) s
        assert!((a[250] as f64 / 1e9 - 7.071).abs() < 0.01);
    }

    #[test]
    fn poisson_has_the_right_mean_and_is_repeatable() {
        let p = [Phase::hold(1000.0, Duration::from_secs(10))];
        let a: Vec<u64> = Arrivals::new(&p, Arrival::Poisson { seed: 7 }).collect();
        let b: Vec<u64> = Arrivals::new(&p, Arrival::Poisson { seed: 7 }).collect();
        assert_eq!(a, b);
        assert!((a.len() as f64 - 10_000.0).abs() < 500.0, "{}", a.len());
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
    }
}
