//! Latencies of successful requests in log-linear buckets (about 0.2%
//! precision, fixed memory), so a run of millions of requests stays small.

const SUB: u64 = 512;

/// Microsecond latencies, bucketed.
#[derive(Clone, Default)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    sum_us: f64,
}

fn index(us: u64) -> usize {
    if us < 2 * SUB {
        us as usize
    } else {
        let e = 63 - us.leading_zeros() as u64 - 9; // us >> e in [512, 1024)
        (2 * SUB + (e - 1) * SUB + ((us >> e) - SUB)) as usize
    }
}

fn value(i: usize) -> u64 {
    let i = i as u64;
    if i < 2 * SUB {
        i
    } else {
        let e = (i - 2 * SUB) / SUB + 1;
        let m = (i - 2 * SUB) % SUB + SUB;
        // middle of the bucket
        (m << e) + (1 << (e - 1))
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Histogram {{ n: {}, p50_us: {}, p99_us: {}, max_us: {} }}",
            self.total,
            self.quantile(0.5),
            self.quantile(0.99),
            self.quantile(1.0)
        )
    }
}

impl Histogram {
    /// Count one latency.
    pub fn record(&mut self, us: u64) {
        let i = index(us);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.total += 1;
        self.sum_us += us as f64;
    }

    /// Values counted.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// True when nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The `q` quantile (0..=1), µs; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return value(i);
            }
        }
        value(self.counts.len() - 1)
    }

    /// Values at most `us` (to the bucket's precision).
    pub fn count_at_most(&self, us: u64) -> u64 {
        self.counts.iter().take(index(us) + 1).sum()
    }

    /// Mean, µs.
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum_us / self.total as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_tight() {
        for us in [0, 1, 1023, 1024, 1_000_000, 1_002_000, 60_000_000_000] {
            let v = value(index(us));
            assert!(
                (v as f64 - us as f64).abs() <= us as f64 * 0.002 + 1.0,
                "{us} -> {v}"
            );
        }
        let mut h = Histogram::default();
        for us in 1..=1000u64 {
            h.record(us * 1000);
        }
        assert!((h.quantile(0.5) as f64 - 500_000.0).abs() < 1500.0);
        assert!((h.quantile(0.99) as f64 - 990_000.0).abs() < 3000.0);
        let below = h.count_at_most(500_000);
        assert!((499..=501).contains(&below), "{below}");
        assert_eq!(h.count_at_most(2_000_000), 1000);
        assert_eq!(h.count_at_most(500), 0);
    }
}
