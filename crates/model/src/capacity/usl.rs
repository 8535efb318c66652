//! The Universal Scalability Law beside the queueing fit (`iolab capacity
//! --sweep N`): a closed-loop sweep of the target at concurrency 1..N
//! ([`sweep_levels`]), the USL fitted to its throughput ([`UslFit`]), and
//! one more level measured at twice N, where the USL's prediction and the
//! queueing fit's are checked against what was measured ([`TwiceCheck`]).
//!
//! X(n) = λ n / (1 + σ (n - 1) + κ n (n - 1)): λ is one client's
//! throughput, σ the share of the work serialized (contention: queueing for
//! a shared resource), κ the cost of keeping n workers coherent
//! (crosstalk: it makes throughput fall past the peak N* = sqrt((1 - σ) / κ)).

use serde::{Deserialize, Serialize};

/// Levels a sweep of up to N clients measures when N is larger (every
/// client count 1..N when N is at most this).
pub const SWEEP_LEVELS: u32 = 8;

/// Two errors closer than this (percentage points) are a tie: they read
/// the same at one decimal.
pub const TIE_POINTS: f64 = 0.05;

/// The noise of a throughput held `duration_s`, % of it: the lab's count
/// rule ([`crate::noise::count_noise`]), at most 100%.
pub fn throughput_noise_pct(rps: f64, duration_s: f64) -> f64 {
    let ok = rps * duration_s;
    if ok >= 1.0 {
        (crate::noise::count_noise(rps, ok) / rps * 100.0).min(100.0)
    } else {
        100.0
    }
}

/// The client counts a sweep up to `max` measures, lowest first: every
/// count when `max` <= [`SWEEP_LEVELS`], else [`SWEEP_LEVELS`] counts
/// spaced geometrically from 1 to `max` (each at least one above the last),
/// so the knee and the flat top both get levels.
pub fn sweep_levels(max: u32) -> Vec<u32> {
    if max <= SWEEP_LEVELS {
        return (1..=max).collect();
    }
    let last = f64::from(SWEEP_LEVELS - 1);
    let mut out: Vec<u32> = Vec::new();
    for i in 0..SWEEP_LEVELS {
        let left = SWEEP_LEVELS - 1 - i;
        let geometric = f64::from(max).powf(f64::from(i) / last).round() as u32;
        let floor = out.last().map_or(1, |l| l + 1);
        // Room for the levels still to come below max.
        out.push(geometric.max(floor).min(max - left));
    }
    out
}

/// One level of the sweep: `concurrency` clients, each sending its next
/// request as soon as the last is answered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SweepLevel {
    /// Clients.
    pub concurrency: u32,
    /// How long it was held, s.
    pub duration_s: f64,
    /// X(n): 2xx within the timeout per second.
    pub throughput_rps: f64,
    /// 2xx in time / sent.
    pub success_ratio: f64,
    /// Mean latency, ms.
    pub mean_ms: f64,
    /// Median latency, ms.
    pub p50_ms: f64,
    /// 99th percentile latency, ms.
    pub p99_ms: f64,
    /// The fitted USL's throughput at this concurrency, req/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usl_rps: Option<f64>,
    /// The queueing fit's (its network simulated with this many clients), req/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queueing_rps: Option<f64>,
}

/// A fitted parameter and its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Estimate {
    /// The least-squares value.
    pub value: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

impl Estimate {
    /// The interval holds `x`.
    pub fn covers(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// The USL fitted to a sweep by nonlinear least squares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UslFit {
    /// Contention: the serialized share of the work, 0..1.
    pub sigma: Estimate,
    /// Crosstalk (coherency), >= 0.
    pub kappa: Estimate,
    /// One client's throughput, req/s.
    pub lambda: Estimate,
    /// N* = sqrt((1 - σ) / κ), clients; `None` when κ's interval reaches 0
    /// (the sweep shows no fall past a peak) or σ >= 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_concurrency: Option<f64>,
    /// X(N*), req/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rps: Option<f64>,
    /// 1 - (residual sum of squares / total sum of squares).
    pub r_squared: f64,
    /// Levels fitted.
    pub levels: u32,
}

impl UslFit {
    /// X(n) of the fitted law, req/s.
    pub fn throughput(&self, n: f64) -> f64 {
        usl(self.lambda.value, self.sigma.value, self.kappa.value, n)
    }
}

/// X(n) = λ n / (1 + σ (n - 1) + κ n (n - 1)).
pub fn usl(lambda: f64, sigma: f64, kappa: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Which prediction came closer to the measured throughput.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Closer {
    /// The Universal Scalability Law.
    Usl,
    /// The queueing fit.
    Queueing,
    /// Either could be closer within the measurement's noise: the two
    /// predictions' midpoint lies in the measured throughput's noise band
    /// (or their errors are within [`TIE_POINTS`]).
    Tie,
}

/// The check at twice the sweep's largest concurrency: each prediction
/// against the throughput measured there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TwiceCheck {
    /// Clients: twice the sweep's largest level.
    pub concurrency: u32,
    /// What was measured there.
    pub measured: SweepLevel,
    /// The USL's prediction, req/s.
    pub usl_rps: f64,
    /// (USL - measured) / measured, %.
    pub usl_error_pct: f64,
    /// The queueing fit's prediction, req/s (`None`: the search fitted nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queueing_rps: Option<f64>,
    /// (queueing - measured) / measured, %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queueing_error_pct: Option<f64>,
    /// Which came closer (`None` without a queueing prediction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closer: Option<Closer>,
    /// |the other's error| - |the closer one's|, percentage points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_points: Option<f64>,
    /// The measured throughput's noise, ± % of it
    /// ([`throughput_noise_pct`]); `None` in documents written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_pct: Option<f64>,
}

impl TwiceCheck {
    /// Both predictions judged against `measured` (its throughput above 0;
    /// errors from the unrounded values).
    pub fn of(measured: SweepLevel, usl_rps: f64, queueing_rps: Option<f64>) -> TwiceCheck {
        let x = measured.throughput_rps;
        let noise_pct = throughput_noise_pct(x, measured.duration_s);
        let error = |p: f64| (p - x) / x * 100.0;
        let usl_error_pct = error(usl_rps);
        let queueing_error_pct = queueing_rps.map(error);
        let (closer, margin_points) = match queueing_rps {
            Some(q_rps) => {
                let (u, q) = (usl_error_pct.abs(), error(q_rps).abs());
                // The verdict must hold wherever in its noise band the
                // measurement really is: the closer prediction changes
                // where the measurement crosses the two's midpoint.
                let midpoint = (usl_rps + q_rps) / 2.0;
                let within = (midpoint - x).abs() <= x * noise_pct / 100.0;
                let closer = if within || (u - q).abs() < TIE_POINTS {
                    Closer::Tie
                } else if u < q {
                    Closer::Usl
                } else {
                    Closer::Queueing
                };
                (Some(closer), Some((u - q).abs()))
            }
            None => (None, None),
        };
        TwiceCheck {
            concurrency: measured.concurrency,
            measured,
            usl_rps,
            usl_error_pct,
            queueing_rps,
            queueing_error_pct,
            closer,
            margin_points,
            noise_pct: Some(noise_pct),
        }
    }
}

/// The sweep of one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sweep {
    /// The largest concurrency asked for (`--sweep N`).
    pub max_concurrency: u32,
    /// How long each level was held, s (`--sweep-step`).
    pub step_s: f64,
    /// Every level measured, lowest first.
    pub levels: Vec<SweepLevel>,
    /// The USL fitted to them (`None`: fewer than six levels answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<UslFit>,
    /// The check at twice N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twice: Option<TwiceCheck>,
    /// Why the sweep stopped before its end: the load generator's refusal,
    /// or `interrupted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Wall time of the sweep and its check, s.
    pub elapsed_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_start_at_one_rise_and_end_at_n() {
        assert_eq!(sweep_levels(6), vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(sweep_levels(8), (1..=8).collect::<Vec<_>>());
        for n in [9, 10, 16, 64, 100, 5_000] {
            let l = sweep_levels(n);
            assert_eq!(l.len(), SWEEP_LEVELS as usize, "{n}: {l:?}");
            assert_eq!((l[0], *l.last().unwrap()), (1, n), "{l:?}");
            assert!(l.windows(2).all(|w| w[0] < w[1]), "{l:?}");
        }
        assert_eq!(sweep_levels(64), vec![1, 2, 3, 6, 11, 20, 35, 64]);
    }

    #[test]
    fn the_check_names_the_closer_prediction_from_unrounded_errors() {
        // 200/s for 100 s: 20,000 answers, ±1.41% (±2.8/s).
        let m = SweepLevel {
            concurrency: 12,
            duration_s: 100.0,
            throughput_rps: 200.0,
            ..SweepLevel::default()
        };
        let c = TwiceCheck::of(m.clone(), 180.0, Some(205.0));
        assert_eq!(c.concurrency, 12);
        assert!((c.usl_error_pct + 10.0).abs() < 1e-9);
        assert!((c.queueing_error_pct.unwrap() - 2.5).abs() < 1e-9);
        assert_eq!(c.closer, Some(Closer::Queueing));
        assert!((c.margin_points.unwrap() - 7.5).abs() < 1e-9);
        let c = TwiceCheck::of(m.clone(), 201.0, Some(150.0));
        assert_eq!(c.closer, Some(Closer::Usl));
        let c = TwiceCheck::of(m.clone(), 190.0, Some(210.0));
        assert_eq!(c.closer, Some(Closer::Tie));
        let c = TwiceCheck::of(m.clone(), 190.0, None);
        assert_eq!((c.closer, c.margin_points), (None, None));
        assert!((c.noise_pct.unwrap() - 200.0 / 20_000f64.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn a_verdict_within_the_measurements_noise_is_a_tie() {
        // USL -0.5%, queueing +2%: the midpoint 201.5 is 1.5/s above 200.
        let at = |duration_s: f64| SweepLevel {
            concurrency: 64,
            duration_s,
            throughput_rps: 200.0,
            ..SweepLevel::default()
        };
        // 5 s: 1,000 answers, ±6.3% (±12.6/s): either could be closer.
        let c = TwiceCheck::of(at(5.0), 199.0, Some(204.0));
        assert_eq!(c.closer, Some(Closer::Tie), "{c:?}");
        assert!((c.margin_points.unwrap() - 1.5).abs() < 1e-9);
        // 10,000 s: 2,000,000 answers, ±0.14% (±0.28/s): the USL.
        let c = TwiceCheck::of(at(10_000.0), 199.0, Some(204.0));
        assert_eq!(c.closer, Some(Closer::Usl), "{c:?}");
        // Both on one side: still a tie when the band reaches the midpoint.
        let c = TwiceCheck::of(at(5.0), 205.0, Some(215.0));
        assert_eq!(c.closer, Some(Closer::Tie), "{c:?}");
        // Nothing answered: the noise is the whole figure.
        assert_eq!(throughput_noise_pct(0.0, 5.0), 100.0);
    }
}
