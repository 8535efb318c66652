//! When a difference between two measured figures is real: larger than the
//! noise of both, where each run's noise comes from its own data. One place,
//! so every mark (the reports' ★ and ties) means the same thing.
//!
//! A figure's noise is the half-width within which a repeat of the run
//! would likely land (about two standard deviations):
//! - repetitions, when the run has them: half their range;
//! - and at least what one run's counts allow: goodput counts ok requests,
//!   so it is uncertain by 2·√ok requests over its window (Poisson count
//!   noise); a p99 read from n answers is uncertain by its rank,
//!   ±2·√(n·0.99·0.01) answers, read off the run's own latency spectrum;
//!   a batch's total by one task's mean time (the last task's finish).
//!
//! Two figures differ when |a − b| > √(noise_a² + noise_b²).

use crate::attack::AttackResult;
use crate::batch::BatchResult;

/// A measured value and its noise, in the value's unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    /// As measured.
    pub value: f64,
    /// Half-width within which a repeat would likely land.
    pub noise: f64,
}

impl Figure {
    /// True when `self` and `other` differ by more than their noise.
    pub fn differs(&self, other: &Figure) -> bool {
        (self.value - other.value).abs() > self.noise.hypot(other.noise)
    }
}

/// The tolerance the reports state under a mark.
pub const STATED: &str = "beyond the noise: goodput ±2·√ok over its window, p99 ±2·√(n·0.99·0.01) ranks of its spectrum, half the repetitions' range when larger";

/// Half the range of `values` (0 for fewer than two).
fn half_range(values: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = values.collect();
    if v.len() < 2 {
        return 0.0;
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (hi - lo) / 2.0
}

/// The count rule: a rate of `ok` events over its window is uncertain by
/// 2·√ok events over that window, ±2·rate/√ok (`ok` above 0).
pub fn count_noise(rate: f64, ok: f64) -> f64 {
    // window = ok / rate, so 2·√ok / window = 2·rate / √ok.
    2.0 * rate / ok.sqrt()
}

/// Goodput (req/s) with its noise: 2·√ok requests over the goodput's
/// window, or half the repetitions' range when that is larger.
pub fn goodput(a: &AttackResult, reps: &[AttackResult]) -> Figure {
    let g = a.throughput_rps.goodput;
    let ok = a.requests.ok as f64;
    let count = if ok > 0.0 && g > 0.0 {
        count_noise(g, ok)
    } else {
        let window = a.driver.duration_s.unwrap_or(a.elapsed_s);
        if window > 0.0 {
            2.0 / window
        } else {
            0.0
        }
    };
    let spread = half_range(reps.iter().map(|r| r.throughput_rps.goodput));
    Figure {
        value: g,
        noise: count.max(spread),
    }
}

/// Latency at percentile `q` (0..=100) from the run's spectrum, its max
/// past the last point.
fn at_percentile(a: &AttackResult, q: f64) -> Option<f64> {
    let s = &a.spectrum;
    if s.is_empty() {
        return None;
    }
    if q >= 100.0 {
        return Some(a.latency_ms.max);
    }
    let i = s.iter().position(|p| p.percentile >= q);
    Some(match i {
        None => a.latency_ms.max,
        Some(0) => s[0].latency_ms,
        Some(i) => {
            let (lo, hi) = (&s[i - 1], &s[i]);
            let span = hi.percentile - lo.percentile;
            let t = if span > 0.0 {
                (q - lo.percentile) / span
            } else {
                1.0
            };
            lo.latency_ms + t * (hi.latency_ms - lo.latency_ms)
        }
    })
}

/// p99 latency (ms) with its noise: the latencies ±2·√(n·0.99·0.01) ranks
/// around it in the run's spectrum (n answers), or half the repetitions'
/// range when that is larger. Without a spectrum, half of p90..max.
pub fn p99(a: &AttackResult, reps: &[AttackResult]) -> Figure {
    let l = &a.latency_ms;
    let n = a.requests.answered().max(1) as f64;
    let band = 100.0 * 2.0 * (0.99 * 0.01 / n).sqrt();
    let rank = match (at_percentile(a, 99.0 - band), at_percentile(a, 99.0 + band)) {
        (Some(lo), Some(hi)) => (hi - lo).max(0.0) / 2.0,
        _ => (l.max - l.p90).max(0.0) / 2.0,
    };
    let spread = half_range(reps.iter().map(|r| r.latency_ms.p99));
    Figure {
        value: l.p99,
        noise: rank.max(spread),
    }
}

/// A batch's total time (s) with its noise: one task's mean time (the
/// slowest kind), since the total ends with whichever task finishes last.
pub fn batch_total(b: &BatchResult) -> Figure {
    let task_s = b
        .by_type
        .values()
        .map(|t| t.service_mean_ms / 1e3)
        .fold(0.0, f64::max);
    Figure {
        value: b.total_s,
        noise: task_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attack::SpectrumPoint;

    fn run(ok: u64, goodput: f64, p99: f64) -> AttackResult {
        let mut a = AttackResult::default();
        a.requests.ok = ok;
        a.requests.planned = ok;
        a.throughput_rps.goodput = goodput;
        a.latency_ms.p90 = 100.0;
        a.latency_ms.p99 = p99;
        a.latency_ms.max = p99 + 10.0;
        a.spectrum = [
            (90.0, 100.0),
            (97.0, p99 - 3.0),
            (99.0, p99),
            (100.0, p99 + 10.0),
        ]
        .map(|(percentile, latency_ms)| SpectrumPoint {
            percentile,
            latency_ms,
        })
        .to_vec();
        a
    }

    #[test]
    fn star_on_190_873_vs_190_828_is_a_tie() {
        // Issue 35: thread-per-request 190.873/s (p99 107 ms) against
        // loop-async 190.828/s (p99 103 ms), ~400 ok each at 200 req/s.
        let tpr = run(400, 190.873, 107.0);
        let la = run(400, 190.828, 103.0);
        let (g1, g2) = (goodput(&tpr, &[]), goodput(&la, &[]));
        assert!((g1.noise - 2.0 * 190.873 / 20.0).abs() < 1e-9);
        assert!(!g1.differs(&g2), "{g1:?} {g2:?}");
        // 4 ms apart, but each p99 of 400 answers spans its p98..max.
        let (p1, p2) = (p99(&tpr, &[]), p99(&la, &[]));
        assert!(!p1.differs(&p2), "{p1:?} {p2:?}");
        // A collapsed model is far beyond the noise.
        let pool = run(360, 120.0, 956.0);
        assert!(goodput(&pool, &[]).differs(&g1));
    }

    #[test]
    fn repetitions_widen_the_noise() {
        let a = run(10_000, 1000.0, 100.0);
        let narrow = goodput(&a, &[]).noise;
        assert!((narrow - 20.0).abs() < 1e-9);
        let reps = [run(10_000, 900.0, 100.0), run(10_000, 1100.0, 100.0)];
        assert_eq!(goodput(&a, &reps).noise, 100.0);
    }
}
