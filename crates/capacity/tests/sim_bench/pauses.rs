//! Verdicts that survive a pause (issue 51): a pool of 8 threads x (2 ms
//! of CPU + 18 ms of waiting) on 2 cores (400/s with no noise), paused
//! 50-200 ms about every 3 s (a JVM's GC, a noisy neighbour), searched
//! under the default-like `p99<200ms,success>=99%` with twelve seeds (the
//! same service, its pauses elsewhere). The numbers are printed to be
//! quoted: `cargo test -p iolab-lab --test sim_bench pause -- --nocapture`.

use std::time::Duration;

use iolab_model::capacity::{Budget, Search, Slo, StepRecord};
use iolab_model::ModelKind;

use iolab_capacity::sim::dial::Pauses;
use iolab_capacity::sim::{network as net, truth, work, Dial, Service, SimBench};
use iolab_capacity::{run, Options};

/// Seeds searched.
pub const SEEDS: u64 = 12;

/// The paused pool, its pauses drawn from `seed`.
pub fn paused(seed: u64) -> (Service, Dial) {
    paused_with(8, seed)
}

/// [`paused`] with `threads` threads (6: a real drop to 300/s).
pub fn paused_with(threads: u64, seed: u64) -> (Service, Dial) {
    let n = net(
        ModelKind::Pool,
        &[("threads", threads)],
        work(2.0, 0.0, 18.0),
        2,
    );
    let dial = Dial {
        seed,
        spread: 0.1,
        pauses: Some(Pauses {
            every_s: 3.0,
            min_ms: 50.0,
            max_ms: 200.0,
        }),
        slow: None,
        neighbour: None,
    };
    (Service::of(n), dial)
}

/// The objective searched under.
pub fn slo() -> Slo {
    "p99<200ms,success>=99%".parse().expect("an objective")
}

/// Every seed's search with `budget`.
pub fn searches(budget: Budget) -> Vec<Search> {
    searches_of(8, budget)
}

/// Every seed's search of the pool of `threads` with `budget`.
pub fn searches_of(threads: u64, budget: Budget) -> Vec<Search> {
    (0..SEEDS)
        .map(|seed| {
            let (s, d) = paused_with(threads, seed);
            let bench = SimBench::new(s, d, Duration::from_secs(1));
            let o = Options {
                budget,
                ..bench.options()
            };
            run("sim", &bench, &slo(), &o, Vec::new(), &|_: &StepRecord| {})
        })
        .collect()
}

/// The answers, their max/min, and the steps they took, printed.
pub fn spread(label: &str, found: &[Search]) -> f64 {
    let caps: Vec<f64> = found
        .iter()
        .map(|s| s.capacity_rps.unwrap_or(0.0))
        .collect();
    let max = caps.iter().copied().fold(0.0, f64::max);
    let min = caps.iter().copied().fold(f64::INFINITY, f64::min);
    let steps: usize = found.iter().map(|s| s.steps.len()).sum();
    let shown: Vec<String> = caps.iter().map(|c| format!("{c:.0}")).collect();
    eprintln!(
        "{label}: capacities {} /s; max/min {:.3}; {steps} steps in all",
        shown.join(", "),
        max / min.max(1e-9)
    );
    max / min.max(1e-9)
}

/// One window deciding alone (the verdict before budgets), a pause landing
/// in the wrong step moved the answer tenfold (38.8 to 400/s); with the
/// default budget (a rate held in up to four windows, one allowed to miss,
/// the pooled requests deciding when the windows disagree) the twelve
/// answers agree within 10%.
#[test]
fn a_pause_every_few_seconds_no_longer_decides_the_capacity() {
    let before = spread("one window (budget 0%)", &searches(Budget::NONE));
    let after = spread("budget 25% (default)", &searches(Budget::default()));
    assert!(before > 2.0, "one window was expected to spread: {before}");
    assert!(after <= 1.10, "with the budget: max/min {after}");
}

/// The median of `v`.
fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    (v[(n - 1) / 2] + v[n / 2]) / 2.0
}

/// With the default budget every seed's interval holds the median of the
/// twelve answers, and the service's capacity as a long hold of the same
/// pauses measures it (`truth::capacity`: a bisection on steps four times
/// the search's, the objective over all their requests) lies in all but
/// [`TRUTH_MISSES`] of them.
#[test]
fn intervals_under_pauses_hold_the_median_and_the_truth() {
    let found = searches(Budget::default());
    let caps: Vec<f64> = found.iter().filter_map(|s| s.capacity_rps).collect();
    let mid = median(&caps);
    let mut outside_median = 0;
    let mut misses = Vec::new();
    for (seed, s) in found.iter().enumerate() {
        let i = s.interval.expect("an interval");
        let (service, dial) = paused(seed as u64);
        let o = Options::default();
        let step = iolab_capacity::step_length(
            &slo(),
            Duration::from_secs(1),
            service.service_ms(),
            &Options {
                max_step: Duration::from_secs(10),
                ..o
            },
            s.capacity_rps.unwrap_or(1.0),
        );
        let t = truth::capacity(&service, &dial, &slo(), Duration::from_secs(1), step);
        let holds_median = i.low_rps <= mid && mid <= i.high_rps;
        let holds_truth = i.low_rps <= t && t <= i.high_rps;
        eprintln!(
            "seed {seed}: capacity {:.0}/s, interval {:.0}-{:.0}/s, truth {t:.0}/s{}{}",
            s.capacity_rps.unwrap_or(0.0),
            i.low_rps,
            i.high_rps,
            if holds_median {
                ""
            } else {
                " (median outside)"
            },
            if holds_truth { "" } else { " (truth outside)" },
        );
        outside_median += usize::from(!holds_median);
        if !holds_truth {
            misses.push(seed);
        }
    }
    eprintln!(
        "median {mid:.0}/s outside {outside_median} of {SEEDS} intervals; truth outside {} ({misses:?})",
        misses.len()
    );
    assert_eq!(outside_median, 0);
    assert!(misses.len() <= TRUTH_MISSES, "{misses:?}");
}

/// Seeds of [`SEEDS`] whose interval may miss the truth.
const TRUTH_MISSES: usize = 1;

/// How often a `--baseline` gate fails on an unchanged service (issue 51):
/// every ordered pair of the twelve seeds' searches (the same service, its
/// pauses elsewhere) is one CI run against a baseline of the same code.
/// Points alone fail a 10% gate whenever two answers differ by more; held
/// to the intervals it fails only where they do not meet. Printed to be
/// quoted; with the default budget the interval gate fails none (with one
/// window deciding, a pause makes a wrong answer with a narrow interval,
/// which no gate can tell from a drop), and never more than the points.
#[test]
fn a_gate_on_an_unchanged_service_fails_on_intervals_less_than_on_points() {
    use iolab_model::capacity::GateCheck;
    for (label, budget) in [
        ("one window (budget 0%)", Budget::NONE),
        ("budget 25% (default)", Budget::default()),
    ] {
        let found = searches(budget);
        let (mut pairs, mut points, mut intervals) = (0, 0, 0);
        for (a, base) in found.iter().enumerate() {
            for (b, now) in found.iter().enumerate() {
                let Some(baseline) = base.capacity_rps.filter(|_| a != b) else {
                    continue;
                };
                let point = GateCheck::of("sim", baseline, now.capacity_rps, 10.0);
                let held = point.clone().with_intervals(base.interval, now.interval);
                pairs += 1;
                points += usize::from(!point.passed);
                intervals += usize::from(!held.passed);
            }
        }
        eprintln!(
            "{label}: a 10% gate on an unchanged service failed {points} of {pairs} pairs on points, {intervals} on intervals"
        );
        assert!(intervals <= points, "{label}: {intervals} > {points}");
        if budget == Budget::default() {
            assert_eq!(
                intervals, 0,
                "{label}: an unchanged service failed its gate"
            );
        }
    }
    // A real drop (8 threads to 6: 400 to 300/s, 25%) fails nearly every
    // pair: 143 of 144 (one pair's intervals, each widened by its split
    // windows, met: that gate said "within the noise").
    let (before, after) = (
        searches(Budget::default()),
        searches_of(6, Budget::default()),
    );
    let (mut pairs, mut failed) = (0, 0);
    for base in &before {
        for now in &after {
            let check = GateCheck::of("sim", base.capacity_rps.unwrap(), now.capacity_rps, 10.0)
                .with_intervals(base.interval, now.interval);
            pairs += 1;
            failed += usize::from(!check.passed);
        }
    }
    eprintln!("a real 25% drop: the interval gate failed {failed} of {pairs} pairs");
    assert!(
        failed * 100 >= pairs * 95,
        "a real drop passed {} of {pairs} gates",
        pairs - failed
    );
}
