//! The sweep's sentences, their numbers recomputed from the sweep.

use iolab_model::capacity::usl::{usl, Estimate, Sweep, SweepLevel, TwiceCheck, UslFit};

use super::*;

fn level(n: u32, x: f64, u: f64, q: Option<f64>) -> SweepLevel {
    SweepLevel {
        concurrency: n,
        duration_s: 1.0,
        throughput_rps: x,
        success_ratio: 1.0,
        mean_ms: 50.0,
        p50_ms: 50.0,
        p99_ms: 60.0,
        usl_rps: Some(u),
        queueing_rps: q,
    }
}

fn est(v: f64, w: f64) -> Estimate {
    Estimate {
        value: v,
        low: v - w,
        high: v + w,
    }
}

fn sweep(kappa: Estimate, queueing: Option<f64>) -> Sweep {
    let (l, s) = (20.0, 0.05);
    let x = |n: u32| usl(l, s, kappa.value, f64::from(n));
    let levels: Vec<SweepLevel> = (1..=6).map(|n| level(n, x(n), x(n), queueing)).collect();
    let peak = (kappa.low > 0.0).then(|| ((1.0 - s) / kappa.value).sqrt());
    let fit = UslFit {
        sigma: est(s, 0.01),
        kappa,
        lambda: est(l, 1.0),
        peak_concurrency: peak,
        peak_rps: peak.map(|n| usl(l, s, kappa.value, n)),
        r_squared: 0.9987,
        levels: 6,
    };
    // Held 60 s: 9,000 answers, ±2.1%, so the check's verdict stands.
    let measured = SweepLevel {
        duration_s: 60.0,
        ..level(12, 150.0, x(12), queueing)
    };
    Sweep {
        max_concurrency: 6,
        step_s: 1.0,
        levels,
        twice: Some(TwiceCheck::of(measured, x(12), queueing)),
        fit: Some(fit),
        stopped: None,
        elapsed_s: 7.5,
    }
}

#[test]
fn the_check_sentence_carries_the_errors_of_its_numbers() {
    let s = sweep(est(0.004, 0.001), Some(160.0));
    let t = s.twice.as_ref().unwrap();
    let text = lines(&s).join("\n");
    // Recomputed here from the check's own numbers.
    let usl_err = (t.usl_rps - 150.0) / 150.0 * 100.0;
    let q_err: f64 = (160.0 - 150.0) / 150.0 * 100.0;
    assert!(text.contains(&format!("({usl_err:+.1}%)")), "{text}");
    assert!(text.contains(&format!("({q_err:+.1}%)")), "{text}");
    let margin = (usl_err.abs() - q_err.abs()).abs();
    let closer = if usl_err.abs() < q_err.abs() {
        "USL"
    } else {
        "queueing fit"
    };
    assert!(
        text.contains(&format!(
            "the {closer} was closer, by {} points",
            num(margin, 1)
        )),
        "{text}"
    );
    assert!(
        text.contains("at twice N, 12 clients: measured 150/s"),
        "{text}"
    );
    // The peak: sqrt((1 - 0.05) / 0.004) = 15.4 clients.
    assert!(
        text.contains("N* = sqrt((1 - σ) / κ) = 15.4 clients"),
        "{text}"
    );
    assert!(text.contains("σ = 0.05 (0.04 to 0.06)"), "{text}");
    assert!(text.contains("κ = 0.004 (0.003 to 0.005)"), "{text}");
    assert!(text.contains("λ = 20/s (19 to 21)"), "{text}");
    assert!(
        text.contains(
            "sweep: 6 levels of closed-loop clients, 1 to 6, 1.00s each, then 12 clients"
        ),
        "{text}"
    );
    // The table has the levels and the check, each with its predictions.
    let grid = levels(&s).text().join("\n");
    assert_eq!(levels(&s).rows.len(), 7, "{grid}");
    assert!(chart("t", &s).unwrap().contains("<svg"));
}

#[test]
fn a_check_within_the_measurements_noise_says_tie_with_its_band() {
    let mut s = sweep(est(0.004, 0.001), Some(160.0));
    // Held 1 s: 150 answers, ±2·√150 = ±16.3% (±24.5/s); the midpoint of
    // the two predictions is nearer 150 than that.
    let measured = level(12, 150.0, 0.0, None);
    let usl_rps = s.fit.as_ref().unwrap().throughput(12.0);
    assert!(((usl_rps + 160.0) / 2.0 - 150.0).abs() < 150.0 * 200.0 / 150f64.sqrt() / 100.0);
    s.twice = Some(TwiceCheck::of(measured, usl_rps, Some(160.0)));
    let text = lines(&s).join("\n");
    let band = 200.0 / 150f64.sqrt();
    assert!(
        text.contains(&format!(
            "a tie: either could be closer within the measurement's noise (±{}%)",
            num(band, 1)
        )),
        "{text}"
    );
    assert!(!text.contains("was closer"), "{text}");
}

#[test]
fn no_peak_and_no_queueing_fit_are_said_not_invented() {
    let s = sweep(est(0.0, 0.0002), None);
    let text = lines(&s).join("\n");
    assert!(
        text.contains("USL peak: none: κ cannot be told from 0"),
        "{text}"
    );
    // λ / σ = 20 / 0.05.
    assert!(text.contains("throughput nears λ / σ = 400/s"), "{text}");
    assert!(
        text.contains("the queueing fit predicted nothing"),
        "{text}"
    );
    assert!(!text.contains("inf") && !text.contains("NaN"), "{text}");
}

#[test]
fn coefficients_keep_three_significant_digits() {
    assert_eq!(coefficient(0.052_34), "0.0523");
    assert_eq!(coefficient(0.000_312_4), "0.000312");
    assert_eq!(coefficient(1.5), "1.5");
    assert_eq!(coefficient(0.0), "0");
    assert_eq!(coefficient(-0.0021), "-0.0021");
}
