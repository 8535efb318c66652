//! The calibration sentence and the pair table, recomputed from their numbers.

use iolab_model::capacity::CpuSource;
use iolab_model::whatif::RateCost;

use super::*;

fn cost_at(rate_rps: f64, ms: f64, met: bool) -> RateCost {
    RateCost {
        rate_rps,
        ms: Some(ms),
        cores_ms: None,
        met,
    }
}

/// A calibration read in A's search.
fn calibration() -> Calibration {
    Calibration {
        wait: "sleep:100.2".into(),
        source: CpuSource::Cores,
        a_rate_rps: 206.25,
        a_ms: 0.5301,
        a_runtime_ms: 0.4702,
        a_runtime: Vec::new(),
        a_warm: Vec::new(),
        a_again: Vec::new(),
        a_answered: Some(1234.0),
        b_runtime: vec![cost_at(1972.0, 0.081, true), cost_at(7000.0, 0.0493, true)],
        uncalibrated_rps: Some(1972.0),
        noise_ms: 0.02,
        lower_rps: Some(5400.0),
    }
}

fn has_in(line: &str, s: &str) {
    assert!(line.contains(s), "{s:?} not in {line}");
}

#[test]
fn the_calibration_sentence_is_made_from_its_numbers() {
    let k = calibration();
    let line = calibrated("rust-loop-async", &k);
    // handler = A's cost less its copy's.
    let handler = k.a_ms - k.a_runtime_ms;
    let has = |s: &str| assert!(line.contains(s), "{s:?} not in {line}");
    has(&format!(
        "handler's own work is {handler:.3} ms (±0.020 ms);"
    ));
    // B's cost: the handler's work and its runtime's at the last rate met.
    has("serving sleep:100.2: 0.081 ms at 1,972/s, then 0.049 ms at 7,000/s;");
    let b = handler + 0.0493;
    has(&format!(
        "simulated at {b:.3} ms a request (uncalibrated: 1,972/s); 0.020 ms higher: 5,400/s"
    ));
    has("A cost 0.530 ms a request at 206/s (the pinned cores' busy time, as the copies'; in its search, 1234 requests answered by then), its runtime");
    assert!(!line.contains("failed"), "{line}");
    // Read from the processes: said so.
    let from_processes = Calibration {
        source: CpuSource::Process,
        ..k.clone()
    };
    let line = calibrated("b", &from_processes);
    has_in(
        &line,
        "at 206/s (the process trees' CPU, as the copies'; in its search,",
    );
    // A held again warm, both last holds met: said so.
    let warm = Calibration {
        a_warm: vec![cost_at(206.25, 0.61, true), cost_at(206.25, 0.5301, true)],
        ..k.clone()
    };
    assert!(warm.a_read_warm());
    has_in(
        &calibrated("b", &warm),
        "copies'; held again warm after its search, 1234 requests answered by then), its",
    );
    // Its last hold failed: A's cost is its search's, and that is said.
    let failed = Calibration {
        a_warm: vec![cost_at(206.25, 0.61, true), cost_at(206.25, 2.0, false)],
        ..k.clone()
    };
    assert!(!failed.a_read_warm());
    has_in(
        &calibrated("b", &failed),
        "in its search, 1234 requests answered by then: held again warm, it failed the objective)",
    );
    // A copy dearer than A itself leaves no handler work, never less.
    let dear = Calibration {
        a_runtime_ms: 0.6,
        ..k.clone()
    };
    assert_eq!(dear.handler_ms(), 0.0);
    assert!(calibrated("b", &dear).contains("(±0.020 ms, within the noise)"));
    // A rate the copy failed at is said, and caps B.
    let mut capped = k;
    capped.b_runtime.push(cost_at(9000.0, 0.4, false));
    let line = calibrated("b", &capped);
    assert!(line.contains("0.400 ms at 9,000/s (the objective failed); it failed the objective at 9,000/s and met it at 7,000/s, so B, doing that and more, is predicted at most 8,000/s, between them"), "{line}");
    // The failed round's cost is not B's runtime's: the last met one is.
    assert!(line.contains(&format!("simulated at {b:.3} ms")), "{line}");
}

#[test]
fn r31_15_warm_holds_that_met_but_were_not_read_are_not_called_a_failure() {
    let mut unread = cost_at(206.25, 0.5, true);
    unread.ms = None;
    let k = Calibration {
        a_warm: vec![cost_at(206.25, 0.61, true), unread],
        ..calibration()
    };
    assert!(!k.a_read_warm());
    let line = calibrated("b", &k);
    has_in(
        &line,
        "in its search, 1234 requests answered by then: held again warm, its CPU was not read)",
    );
    assert!(!line.contains("failed"), "{line}");
}

#[test]
fn r31_17_a_held_again_after_its_copy_is_said_so() {
    let k = Calibration {
        a_warm: vec![cost_at(106.3, 3.26, true), cost_at(106.3, 1.98, true)],
        a_again: vec![cost_at(106.3, 1.52, true), cost_at(106.3, 1.5301, true)],
        ..calibration()
    };
    assert!(k.a_read_again() && k.a_read_warm());
    has_in(
        &calibrated("b", &k),
        "copies'; held again after its search and its copy, 1234 requests answered before its copy), its",
    );
    // A failed hold after the copy leaves the warm holds' reading, said so.
    let failed = Calibration {
        a_again: vec![cost_at(106.3, 1.52, true), cost_at(106.3, 4.0, false)],
        ..k
    };
    assert!(!failed.a_read_again() && failed.a_read_warm());
    has_in(
        &calibrated("b", &failed),
        "held again warm after its search, 1234 requests answered by then), its",
    );
}

/// The CPU's steadiness is said from the reading beside it: its spread is
/// p90 over p10.
#[test]
fn the_cpu_speed_line_is_made_from_its_numbers() {
    let s = CpuSpeed {
        timings: 520,
        p10_ms: 4.05,
        p50_ms: 6.1,
        p90_ms: 6.6,
    };
    let moved = (s.p90_ms / s.p10_ms - 1.0) * 100.0;
    assert_eq!(
        speed_line(&s),
        format!("  the CPU: a fixed loop took 4.05ms to 6.60ms (p10 to p90 of 520 timings on the generator's cores): its speed moved {moved:.0}% through the pair")
    );
}

/// Issue 51: each B's prediction and measurement with their intervals, and
/// whether they meet, in the pair table from the document's figures.
#[test]
fn the_pair_table_says_whether_the_intervals_meet() {
    use iolab_model::capacity::{Interval, Search, WhatIf};
    use iolab_model::whatif::{Counterfactual, Pair, WhatIfFile};
    let i = |low_rps, high_rps| Some(Interval { low_rps, high_rps });
    let fitted = Search {
        name: "a".into(),
        capacity_rps: Some(200.0),
        interval: i(180.0, 240.0),
        ..Search::default()
    };
    let change = |name: &str, predicted: f64, measured: f64, m: Option<Interval>| {
        let predicted_interval =
            Counterfactual::interval(Some(predicted), fitted.capacity_rps, fitted.interval);
        Counterfactual {
            name: name.into(),
            change: name.into(),
            predicted: WhatIf {
                label: name.into(),
                change: name.into(),
                model: "pool".into(),
                fitted: false,
                capacity_rps: Some(predicted),
                slo_capacity_rps: Some(predicted),
                points: Vec::new(),
                cannot_say: None,
            },
            measured: Search {
                capacity_rps: Some(measured),
                interval: m,
                ..Search::default()
            },
            error_pct: Counterfactual::error(Some(predicted), Some(measured)),
            intervals_meet: Counterfactual::meet(predicted_interval, m),
            predicted_interval,
            calibration: None,
        }
    };
    let doc = WhatIfFile {
        schema: iolab_model::whatif::WHATIF_SCHEMA.into(),
        scale: 1.0,
        started_utc: String::new(),
        pairs: vec![Pair {
            name: "p".into(),
            description: String::new(),
            slo: "p99<200ms".parse().unwrap(),
            fitted: fitted.clone(),
            expected: None,
            named_right: None,
            changes: vec![
                change("b1", 400.0, 470.0, i(450.0, 520.0)),
                change("b2", 400.0, 300.0, i(280.0, 340.0)),
            ],
            cpu_speed: None,
        }],
    };
    let g = super::pairs(&doc);
    let col = |h: &str| g.header.iter().position(|x| x == h).unwrap();
    // 400 predicted from A's 180-240 around 200: 360-480.
    assert_eq!(g.rows[0][col("predicted/s")], "400 (360-480)");
    assert_eq!(g.rows[0][col("intervals")], "meet");
    assert_eq!(g.rows[1][col("intervals")], "apart");
    assert_eq!(g.rows[1][col("error")], "33.3%");
}
