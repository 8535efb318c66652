//! The fit on synthetic sweeps of known σ, κ, λ.

use super::*;

/// `levels` of the law, each throughput times (1 + noise), the noise a
/// uniform draw in ±`spread` from a seeded generator.
fn sweep(p: Params, levels: &[u32], spread: f64, seed: u64) -> Vec<(f64, f64)> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    levels
        .iter()
        .map(|&n| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (s >> 11) as f64 / (1u64 << 53) as f64;
            let n = f64::from(n);
            (
                n,
                usl(p[2], p[0], p[1], n) * (1.0 + spread * (2.0 * u - 1.0)),
            )
        })
        .collect()
}

const LEVELS: [u32; 8] = [1, 2, 4, 8, 16, 32, 48, 64];

#[test]
fn recovers_exact_parameters() {
    let truth = [0.05, 0.0008, 120.0];
    let f = fit(&sweep(truth, &LEVELS, 0.0, 1)).unwrap();
    assert!((f.sigma.value - 0.05).abs() < 1e-6, "{f:?}");
    assert!((f.kappa.value - 0.0008).abs() < 1e-8, "{f:?}");
    assert!((f.lambda.value - 120.0).abs() < 1e-4, "{f:?}");
    assert!(f.r_squared > 0.999_999, "{f:?}");
    // N* = sqrt((1 - 0.05) / 0.0008) = 34.46 clients.
    let peak = f.peak_concurrency.expect("a peak");
    assert!((peak - (0.95f64 / 0.0008).sqrt()).abs() < 1e-3, "{peak}");
    assert!((f.peak_rps.unwrap() - usl(120.0, 0.05, 0.0008, peak)).abs() < 1e-6);
    assert_eq!(f.levels, 8);
}

#[test]
fn noisy_sweeps_recover_them_and_the_intervals_cover_them() {
    let truth = [0.08, 0.0015, 50.0];
    let (mut covered, runs) = ([0u32; 3], 40);
    for seed in 0..runs {
        let f = fit(&sweep(truth, &LEVELS, 0.03, seed)).unwrap();
        for (i, e) in [f.sigma, f.kappa, f.lambda].iter().enumerate() {
            assert!(e.low <= e.value && e.value <= e.high, "{e:?}");
            covered[i] += u32::from(e.covers(truth[i]));
        }
        assert!((f.lambda.value - 50.0).abs() / 50.0 < 0.1, "{f:?}");
        // Informative, not vacuous: λ within ±12%, κ within ±30%.
        assert!(f.lambda.high - f.lambda.low < 0.25 * 50.0, "{f:?}");
        assert!(f.kappa.high - f.kappa.low < 0.6 * 0.0015, "{f:?}");
        assert!((f.sigma.value - 0.08).abs() < 0.08, "{f:?}");
        assert!((f.kappa.value - 0.0015).abs() < 0.001, "{f:?}");
    }
    // 95% intervals: about 38 of 40 cover the truth; 34 is far in the tail.
    for (name, c) in ["sigma", "kappa", "lambda"].iter().zip(covered) {
        assert!(c >= 34, "{name}: {c} of {runs} intervals cover the truth");
    }
}

#[test]
fn no_crosstalk_means_no_peak_rather_than_an_infinite_one() {
    // Amdahl's law: σ = 0.1, κ = 0; throughput rises forever towards λ / σ.
    let truth = [0.1, 0.0, 40.0];
    let exact = fit(&sweep(truth, &LEVELS, 0.0, 0)).unwrap();
    assert!(exact.kappa.value.abs() < 1e-9, "{exact:?}");
    assert_eq!((exact.peak_concurrency, exact.peak_rps), (None, None));
    for seed in 0..10 {
        let f = fit(&sweep(truth, &LEVELS, 0.02, seed)).unwrap();
        assert!(f.kappa.value >= 0.0 && f.kappa.low <= 0.0, "{f:?}");
        assert_eq!(f.peak_concurrency, None, "{f:?}");
        let json = serde_json::to_string(&f).unwrap();
        assert!(!json.contains("inf") && !json.contains("null"), "{json}");
    }
}

#[test]
fn a_flat_pool_is_fitted_with_a_peak_near_its_size() {
    // A pool of 4 threads, 50 ms each: X(n) = min(n, 4) / 0.05.
    let pts: Vec<(f64, f64)> = (1..=8)
        .map(|n| (f64::from(n), f64::from(n.min(4)) / 0.05))
        .collect();
    let f = fit(&pts).unwrap();
    assert!((f.lambda.value - 20.0).abs() < 4.0, "{f:?}");
    assert!(
        f.throughput(4.0) > 60.0 && f.throughput(8.0) < 90.0,
        "{f:?}"
    );
}

#[test]
fn too_few_levels_fit_nothing() {
    let truth = [0.05, 0.001, 10.0];
    assert!(fit(&sweep(truth, &[1, 2, 3, 4, 5], 0.0, 0)).is_none());
    assert!(fit(&sweep(truth, &[1, 1, 1, 2, 2, 2], 0.0, 0)).is_none());
    let mut zero = sweep(truth, &[1, 2, 3, 4, 5, 6], 0.0, 0);
    zero[5].1 = 0.0;
    assert!(
        fit(&zero).is_none(),
        "a level that answered nothing is not fitted"
    );
}

#[test]
fn t_quantiles_shrink_towards_the_normal() {
    assert_eq!(t975(3), 3.182);
    assert!(t975(31) < t975(30) && t975(1000) > 1.96 && t975(1000) < 1.97);
    assert!(t975(0).is_infinite());
}
