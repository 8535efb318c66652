//! The open-loop timeline: when each request of a [`Driver::Open`] plan is
//! due, computed rather than slept per request. The load generator sends on
//! it and the simulation in `predict` arrives on it, so a prediction describes
//! the very sends a measurement makes (same plan and seed, same times).
//!
//! Arrivals are points in "area space" (the k-th request is due when the area
//! under the rate curve reaches its point): evenly spaced integers for a
//! constant process, a unit-rate Poisson process for `poisson`. Mapping a point
//! back through the piecewise-linear rate gives its time, so ramps, holds and
//! both arrival processes compose without special cases. Pure computation: no
//! clock, no IO.
//!
//! [`Driver::Open`]: crate::driver::Driver::Open

use crate::driver::{Arrival, Phase};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Debug, Clone)]
struct Segment {
    start_s: f64,
    dur_s: f64,
    from: f64,
    to: f64,
    area_start: f64,
    area: f64,
}

#[derive(Debug, Clone)]
enum Points {
    Constant { next: u64, count: u64 },
    Poisson { rng: Box<StdRng>, acc: f64 },
}

/// Iterator over intended send times (nanoseconds from the run's start) of one
/// generator thread's share: every `stride`-th point starting at `offset`.
#[derive(Debug, Clone)]
pub struct Schedule {
    segments: Vec<Segment>,
    total_area: f64,
    points: Points,
    stride: usize,
    skip: usize,
    seg: usize,
}

impl Schedule {
    /// The whole schedule (one thread).
    pub fn new(phases: &[Phase], arrival: Arrival) -> Self {
        Self::share(phases, arrival, 0, 1)
    }

    /// Thread `index` of `threads`' round-robin share of the schedule.
    pub fn share(phases: &[Phase], arrival: Arrival, index: usize, threads: usize) -> Self {
        let mut segments = Vec::with_capacity(phases.len());
        let (mut t, mut a) = (0.0, 0.0);
        for p in phases {
            let dur_s = p.duration.as_secs_f64();
            let area = p.planned();
            segments.push(Segment {
                start_s: t,
                dur_s,
                from: p.from_rps,
                to: p.to_rps,
                area_start: a,
                area,
            });
            t += dur_s;
            a += area;
        }
        let points = match arrival {
            Arrival::Constant => Points::Constant {
                next: 0,
                count: a.floor() as u64,
            },
            Arrival::Poisson { seed } => Points::Poisson {
                rng: Box::new(StdRng::seed_from_u64(seed)),
                acc: 0.0,
            },
        };
        Schedule {
            segments,
            total_area: a,
            points,
            stride: threads.max(1),
            skip: index,
            seg: 0,
        }
    }

    /// The next point of the whole process, in area units.
    fn next_area(&mut self) -> Option<f64> {
        match &mut self.points {
            Points::Constant { next, count } => {
                if *next >= *count {
                    return None;
                }
                *next += 1;
                Some((*next - 1) as f64)
            }
            Points::Poisson { rng, acc } => {
                let u: f64 = rng.gen();
                *acc += -(1.0 - u).ln();
                (*acc < self.total_area).then_some(*acc)
            }
        }
    }

    /// Consume the rest of this share and say how many points it held,
    /// without computing their times (O(1) for a constant process): a run
    /// cut short counts the requests it will never send.
    pub fn count_rest(&mut self) -> u64 {
        if let Points::Constant { next, count } = &mut self.points {
            let left = *count - (*next).min(*count);
            *next = *count;
            let skip = self.skip as u64;
            self.skip = self.stride - 1;
            return if left > skip {
                1 + (left - skip - 1) / self.stride as u64
            } else {
                0
            };
        }
        let mut n = 0;
        loop {
            for _ in 0..self.skip {
                if self.next_area().is_none() {
                    return n;
                }
            }
            self.skip = self.stride - 1;
            if self.next_area().is_none() {
                return n;
            }
            n += 1;
        }
    }

    /// Time (seconds) at which the area under the rate reaches `x`.
    fn time_of(&mut self, x: f64) -> f64 {
        while self.seg + 1 < self.segments.len()
            && x >= self.segments[self.seg].area_start + self.segments[self.seg].area
        {
            self.seg += 1;
        }
        let s = &self.segments[self.seg];
        let y = (x - s.area_start).max(0.0);
        if y == 0.0 {
            return s.start_s;
        }
        // Solve from*t + c*t^2 = y with c = (to - from) / (2 dur), in the
        // cancellation-free form t = 2y / (from + sqrt(from^2 + 4cy)).
        let c = (s.to - s.from) / (2.0 * s.dur_s);
        let disc = (s.from * s.from + 4.0 * c * y).max(0.0);
        let t = 2.0 * y / (s.from + disc.sqrt());
        s.start_s + t.min(s.dur_s)
    }
}

impl Iterator for Schedule {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        for _ in 0..self.skip {
            self.next_area()?;
        }
        self.skip = self.stride - 1;
        let x = self.next_area()?;
        Some((self.time_of(x) * 1e9).round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ramp() -> Vec<Phase> {
        vec![
            Phase {
                duration: Duration::from_secs(10),
                from_rps: 50.0,
                to_rps: 450.0,
            },
            Phase::hold(450.0, Duration::from_secs(60)),
        ]
    }

    #[test]
    fn the_rest_counted_is_the_rest_iterated() {
        for arrival in [Arrival::Constant, Arrival::Poisson { seed: 7 }] {
            for (index, threads) in [(0, 1), (0, 3), (1, 3), (2, 3), (4, 5)] {
                for taken in [0, 1, 5, 40, 10_000] {
                    let share = || Schedule::share(&ramp()[..1], arrival, index, threads);
                    let mut a = share();
                    let mut b = share();
                    for _ in 0..taken {
                        a.next();
                        b.next();
                    }
                    let want = a.count() as u64;
                    assert_eq!(
                        b.count_rest(),
                        want,
                        "{arrival:?} {index}/{threads} {taken}"
                    );
                    assert_eq!(b.next(), None);
                }
            }
        }
    }

    #[test]
    fn constant_spacing_and_count() {
        let v: Vec<u64> = Schedule::new(
            &[Phase::hold(100.0, Duration::from_secs(2))],
            Arrival::Constant,
        )
        .collect();
        assert_eq!(v.len(), 200);
        assert_eq!(v[0], 0);
        assert_eq!(v[1], 10_000_000);
        assert_eq!(v[199], 1_990_000_000);
    }

    #[test]
    fn ramp_plans_the_area_and_is_monotonic() {
        let v: Vec<u64> = Schedule::new(&ramp(), Arrival::Constant).collect();
        assert_eq!(v.len(), 2_500 + 27_000);
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
        // Half the ramp's area (1250 + ...) is reached after ~6.2 s, not 5 s.
        let in_first_5s = v.iter().filter(|&&t| t < 5_000_000_000).count();
        assert!((in_first_5s as i64 - 750).abs() <= 1, "{in_first_5s}");
        assert!(*v.last().unwrap() < 70_000_000_000);
    }

    #[test]
    fn shares_partition_the_schedule() {
        let all: Vec<u64> = Schedule::new(&ramp(), Arrival::Poisson { seed: 7 }).collect();
        let mut merged: Vec<u64> = (0..3)
            .flat_map(|i| Schedule::share(&ramp(), Arrival::Poisson { seed: 7 }, i, 3))
            .collect();
        merged.sort_unstable();
        assert_eq!(all, merged);
        let n = all.len() as f64;
        assert!((n - 29_500.0).abs() < 29_500.0 * 0.05, "{n}");
    }

    #[test]
    fn a_ramp_from_zero_follows_the_area() {
        let ramp = Phase {
            duration: Duration::from_secs(10),
            from_rps: 0.0,
            to_rps: 100.0,
        };
        let v: Vec<u64> = Schedule::new(&[ramp], Arrival::Constant).collect();
        assert_eq!(v.len(), 500);
        // Half the requests (250) come after t = 10/sqrt(2) s.
        assert!((v[250] as f64 / 1e9 - 7.071).abs() < 0.01, "{}", v[250]);
    }

    #[test]
    fn poisson_has_the_planned_mean_and_is_ordered() {
        let p = [Phase::hold(1000.0, Duration::from_secs(10))];
        let v: Vec<u64> = Schedule::new(&p, Arrival::Poisson { seed: 7 }).collect();
        assert!((v.len() as f64 - 10_000.0).abs() < 500.0, "{}", v.len());
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn no_rate_plans_nothing() {
        let idle = [Phase::hold(0.0, Duration::from_secs(5))];
        assert_eq!(Schedule::new(&idle, Arrival::Constant).count(), 0);
        assert_eq!(
            Schedule::new(&idle, Arrival::Poisson { seed: 3 }).count(),
            0
        );
        assert_eq!(Schedule::new(&[], Arrival::Constant).count(), 0);
    }

    #[test]
    fn poisson_is_repeatable_by_seed() {
        let p = [Phase::hold(1000.0, Duration::from_secs(1))];
        let a: Vec<u64> = Schedule::new(&p, Arrival::Poisson { seed: 1 }).collect();
        let b: Vec<u64> = Schedule::new(&p, Arrival::Poisson { seed: 1 }).collect();
        let c: Vec<u64> = Schedule::new(&p, Arrival::Poisson { seed: 2 }).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
