//! Predictions against measurement: every run of the saved showdown
//! (`docs/results/showdown/runs.json`, measured on this project's machine
//! with `--reps 5`) predicted again from its own plan, and held to the
//! median of the five repetitions' success share and p50 of successes.
//!
//! The rule, every model alike: success within 10% of the measured median
//! (or 1.5 points, for shares near zero), and the p50 within 15% where both
//! have successes to speak of; 20% once the target is overloaded (under 90%
//! success), where the p50 of the few successes depends on when each waited
//! request was picked up. A figure the repetitions themselves do not agree on
//! within that bound (loop-blocking at 50 req/s: 28% in four repetitions, 39%
//! in the fifth) cannot hold a prediction to it; there the prediction must
//! lie inside the measured range instead, and the test prints which rule
//! held each figure.

use iolab_model::attack::AttackResult;
use iolab_model::concurrency::Host;
use iolab_model::runs::{RunRecord, RunsFile};

fn saved() -> RunsFile {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/results/showdown");
    iolab_model::runs::load(std::path::Path::new(path)).expect("the saved showdown")
}

/// One figure over the repetitions: its median and its range.
struct Measured {
    median: f64,
    min: f64,
    max: f64,
}

impl Measured {
    fn of(mut values: Vec<f64>) -> Option<Measured> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let median = if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        };
        Some(Measured {
            median,
            min: values[0],
            max: values[n - 1],
        })
    }

    /// Which rule holds `predicted`, or `None` when neither does.
    fn holds(&self, predicted: f64, bound: f64) -> Option<&'static str> {
        if (predicted - self.median).abs() <= bound {
            Some("median")
        } else if self.max - self.min > bound && (self.min..=self.max).contains(&predicted) {
            Some("range")
        } else {
            None
        }
    }
}

fn repetitions(run: &RunRecord) -> Vec<&AttackResult> {
    if run.reps.is_empty() {
        run.attack.iter().collect()
    } else {
        run.reps.iter().collect()
    }
}

#[test]
fn every_model_of_the_showdown_is_predicted_within_the_bounds() {
    let file = saved();
    let cores = file.environment.cores.max(1);
    let mut misses = Vec::new();
    let mut checked = 0;
    for run in &file.runs {
        let reps = repetitions(run);
        let share = |a: &&AttackResult| a.requests.ok as f64 / a.requests.planned.max(1) as f64;
        let Some(success) = Measured::of(reps.iter().map(share).collect()) else {
            continue;
        };
        let answered = reps.iter().filter(|a| a.requests.ok >= 5);
        let p50 = Measured::of(answered.map(|a| a.latency_ms.p50).collect());
        let p = iolab_predict::predict_run(&run.spec, Host::cores(cores)).expect("a prediction");
        let p50_share = if success.median < 0.9 { 0.20 } else { 0.15 };
        let ok_rule = success.holds(p.success_ratio, (0.10 * success.median).max(0.015));
        let p50_rule = match &p50 {
            Some(m) if p.ok >= 5 => m.holds(p.latency_ms.p50, p50_share * m.median),
            _ => Some("too few successes"),
        };
        let line = format!(
            "{:28} success {:5.1}% vs {:5.1}% [{:5.1}-{:5.1}] ({})  p50 {:5.0} vs {:5.0} ms ({}) x{}",
            run.name,
            100.0 * p.success_ratio,
            100.0 * success.median,
            100.0 * success.min,
            100.0 * success.max,
            ok_rule.unwrap_or("MISS"),
            p.latency_ms.p50,
            p50.as_ref().map_or(f64::NAN, |m| m.median),
            p50_rule.unwrap_or("MISS"),
            reps.len(),
        );
        println!("{line}");
        checked += 1;
        if ok_rule.is_none() || p50_rule.is_none() {
            misses.push(line);
        }
    }
    assert_eq!(checked, 24, "the saved showdown has 24 measured runs");
    assert!(
        misses.is_empty(),
        "predicted outside the bounds:\n{}",
        misses.join("\n")
    );
}
