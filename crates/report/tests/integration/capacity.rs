//! The capacity report's sentences on a saved search (`fixtures/capacity-pool.json`:
//! a pool of 20 threads at 100 ms, its what-ifs): every figure they state
//! recomputed from the document.

use std::path::PathBuf;

use iolab_model::capacity::{CapacityFile, Interval, Windows};
use iolab_report::capacity::{answer, estimate, extrapolated, text};
use iolab_report::numbers::{num, rate};

fn fixture() -> CapacityFile {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/capacity-pool.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn predictions_beyond_twice_the_capacity_are_named_extrapolations_with_their_factor() {
    let doc = fixture();
    let s = &doc.searches[0];
    let cap = s.capacity_rps.unwrap();
    let line = extrapolated(s).expect("the fixture predicts far above 206/s");
    // Every change above 2x the capacity is named with its factor; the
    // others (as fitted, twice the threads: 416 of 206) are not.
    for w in s.what_if.iter().filter(|w| !w.fitted) {
        let p = w.slo_capacity_rps.unwrap();
        let named = format!("{} {}/s ({}x)", w.change, rate(p), num(p / cap, 1));
        assert_eq!(line.contains(&named), p > 2.0 * cap, "{named}: {line}");
    }
    assert!(
        line.contains(&format!(
            "the highest rate measured to pass ({}/s)",
            rate(cap)
        )),
        "{line}"
    );
    assert!(text(&doc).contains(&line));
}

#[test]
fn the_fitted_cpu_says_how_it_was_read_in_the_models_words() {
    // "(median ... over steps: one rate)" was said of a median read over
    // five rates whose slope fell: the method's phrase is the model's own.
    let doc = fixture();
    let f = doc.searches[0].fit.as_ref().unwrap();
    let phrase = f.cpu_method.unwrap().phrase();
    // Written before the CPU's source was recorded: the method alone.
    assert_eq!(f.cpu_source, None);
    assert!(
        text(&doc).contains(&format!("per request ({phrase})")),
        "{phrase}"
    );
    assert!(!text(&doc).contains("one rate"));
}

/// The fixture as a search with budgets writes it: its deciding steps'
/// windows, and an interval around its answer.
fn with_interval() -> CapacityFile {
    let mut doc = fixture();
    let s = &mut doc.searches[0];
    let c = s.capacity_rps.unwrap();
    for st in &mut s.steps {
        st.windows = Some(Windows {
            passed: if st.passed { 3 } else { 0 },
            failed: if st.passed { 0 } else { 2 },
            most: 4,
            allowed: 1,
            held: st.passed,
        });
    }
    s.interval = Some(Interval {
        low_rps: 0.93 * c,
        high_rps: 1.12 * c,
    });
    doc
}

/// The answer says the capacity with the digits its interval gives it,
/// the interval, and the bracket; each decided step its windows.
#[test]
fn the_capacity_is_said_with_its_interval_and_each_rate_with_its_windows() {
    let doc = with_interval();
    let t = text(&doc);
    insta::assert_snapshot!("capacity-pool-interval", t);
    let s = &doc.searches[0];
    let i = s.interval.unwrap();
    let line = answer(s);
    assert!(line.starts_with(&format!(
        "capacity {}",
        estimate(s.capacity_rps.unwrap(), &i)
    )));
    // 206/s in 191.6-230.7: a fifth of the width is 7.8, the unit 5.
    assert_eq!(estimate(206.0, &i), "205/s (190-235)");
    let wide = Interval {
        low_rps: 2_900.0,
        high_rps: 3_200.0,
    };
    assert_eq!(estimate(3_050.0, &wide), "3,050/s (2,900-3,200)");
}

/// Issue 51: a hog beside the target widened its interval past the
/// capacity itself, and the capacity read "0/s (0-600)" for 23.5/s held:
/// the unit stays within a fifth of the capacity.
#[test]
fn r51_12_an_interval_wider_than_the_capacity_keeps_its_digits() {
    let hog = Interval {
        low_rps: 18.7,
        high_rps: 550.0,
    };
    assert_eq!(estimate(23.5, &hog), "24/s (18-550)");
}

/// Issue 49 finding 17, the rest of it: a step nothing answered printed
/// "p50 0s, p99 0s" in its line, the curve and the CSV, and drew a p99 point.
/// A step with no answer has no latency: `-` in text, empty in CSV, no point.
#[test]
fn r38_17_a_step_nothing_answered_has_no_latency() {
    use iolab_model::capacity::StepRecord;
    use iolab_report::capacity::{curve, render, step_line};
    use iolab_report::Format;
    let mut doc = fixture();
    let answered = doc.searches[0].steps[0].clone();
    assert!(answered.attack.requests.answered() > 0);
    let dead = StepRecord {
        rate_rps: 10.0,
        verdict: "0% answered within 200ms".into(),
        ..StepRecord::default()
    };
    assert_eq!(dead.attack.requests.answered(), 0);
    assert!(step_line(&dead).contains("p99 -,"), "{}", step_line(&dead));
    assert!(step_line(&answered).contains(&format!(
        "p99 {},",
        iolab_report::numbers::ms(answered.p99_ms)
    )));
    doc.searches[0].steps = vec![dead, answered];
    let g = curve(&doc.searches[0]);
    let (p50, p99) = (
        g.header.iter().position(|h| h == "p50"),
        g.header.iter().position(|h| h == "p99"),
    );
    let (p50, p99) = (p50.unwrap(), p99.unwrap());
    assert_eq!(
        (g.rows[0][p50].as_str(), g.rows[0][p99].as_str()),
        ("-", "-")
    );
    assert_ne!(g.rows[1][p99], "-");
    let csv = String::from_utf8(render(&doc, Format::Csv).unwrap()).unwrap();
    let first = csv.lines().nth(1).unwrap();
    assert!(!first.contains(",0,0,") && first.contains(",,"), "{first}");
}

/// Issue 51: the machine's noise in one sentence made from its figures:
/// steady within the precision asked, or too noisy, with the interval it
/// widened to and the precision a quieter machine would give.
#[test]
fn the_machine_line_says_the_noise_from_its_figures() {
    use iolab_model::capacity::Machine;
    use iolab_model::whatif::CpuSpeed;
    use iolab_report::capacity::{machine_line, too_noisy};
    let mut doc = with_interval();
    let s = &mut doc.searches[0];
    assert_eq!(machine_line(s), None, "nothing watched, nothing said");
    let speed = |p10_ms: f64, p90_ms: f64| CpuSpeed {
        timings: 60,
        p10_ms,
        p50_ms: p10_ms,
        p90_ms,
    };
    s.machine = Some(Machine {
        generator_cpu: Some(speed(2.0, 2.12)),
        target_cpu: None,
        steal_pct: Some(0.4),
        neighbours: None,
        pauses: None,
        loop_delay: None,
        asked_pct: 5.0,
    });
    let line = machine_line(s).unwrap();
    assert_eq!(
        line,
        "machine: steady enough for the 5% asked: the CPU's speed moved 6% on the generator's cores (a fixed loop took 2.00ms to 2.12ms), 0.4% of the CPU time was stolen (it may move a capacity by 3.4%)"
    );
    assert!(!too_noisy(s));
    let m = Machine {
        generator_cpu: Some(speed(2.0, 2.2)),
        target_cpu: Some(speed(1.0, 1.45)),
        steal_pct: Some(0.0),
        neighbours: None,
        pauses: None,
        loop_delay: None,
        asked_pct: 5.0,
    };
    // The reach is half the larger move (45%) plus the steal: 22.5%.
    assert!((m.reach() - 0.225).abs() < 1e-9);
    s.interval = s.interval.map(|i| m.widen(i));
    s.machine = Some(m);
    let i = s.interval.unwrap();
    let line = machine_line(s).unwrap();
    assert!(too_noisy(s));
    assert!(
        line.starts_with("machine: too noisy for the 5% asked: the CPU's speed moved 10% on the generator's cores"),
        "{line}"
    );
    assert!(
        line.contains("moved 45% on the target's cores (a fixed loop took 1.00ms to 1.45ms)"),
        "{line}"
    );
    assert!(
        line.contains("which may move a capacity by 22.5%"),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "the capacity is between {}/s and {}/s; rerun on quieter cores for ±5%",
            rate(i.low_rps),
            rate(i.high_rps)
        )),
        "{line}"
    );
    assert!(text(&doc).contains(&line));
}

/// Issue 51: a CPU hog on the target's core through half a search is named
/// with its figures, and the interval reaches up by what it took.
#[test]
fn the_machine_line_names_other_processes_on_the_targets_cores() {
    use iolab_model::capacity::{Machine, Neighbours, Second};
    use iolab_report::capacity::{machine_line, too_noisy};
    let mut doc = with_interval();
    let s = &mut doc.searches[0];
    let second = |target: f64, others: f64, waited: f64| Second {
        target,
        others,
        waited,
    };
    let mut seconds = vec![second(0.95, 0.02, 0.03); 10];
    seconds.extend(vec![second(0.5, 0.48, 0.5); 10]);
    let n = Neighbours::of(&seconds).unwrap();
    let m = Machine {
        neighbours: Some(n),
        asked_pct: 5.0,
        ..Machine::default()
    };
    let before = s.interval.unwrap();
    s.interval = s.interval.map(|i| m.widen(i));
    s.machine = Some(m.clone());
    let i = s.interval.unwrap();
    assert_eq!(i.low_rps, before.low_rps, "a neighbour only takes");
    assert!((i.high_rps / before.high_rps - 1.0 - m.reach()).abs() < 1e-9);
    let line = machine_line(s).unwrap();
    assert!(too_noisy(s));
    let took = 48.0;
    assert_eq!(
        line,
        format!(
            "machine: too noisy for the 5% asked: other processes used {}% of the target's cores (at most 48% in a second; they kept one of the target's threads waiting up to {}% of a second), which may move a capacity by {}%: the capacity is between {}/s and {}/s; rerun on quieter cores for ±5%",
            num(n.mean_pct, 0),
            num(took, 0),
            num(m.reach() * 100.0, 1),
            rate(i.low_rps),
            rate(i.high_rps)
        )
    );
    // Past 100% the reach is a factor: 95% taken leaves 1/20 of the target.
    let m = Machine {
        neighbours: Neighbours::of(&[second(0.05, 0.95, 0.95)]),
        asked_pct: 5.0,
        ..Machine::default()
    };
    assert!((m.reach() - 19.0).abs() < 1e-9);
    s.machine = Some(m);
    let line = machine_line(s).unwrap();
    assert!(
        line.contains("which may move a capacity by up to 20x: "),
        "{line}"
    );
}

/// Issue 51: the gate's line names the intervals it was held to, from the
/// check's own figures.
#[test]
fn the_gate_line_says_a_drop_within_the_noise_and_a_real_one() {
    use iolab_model::capacity::{Gate, GateCheck};
    use iolab_report::capacity::gate_line;
    let i = |low_rps: f64, high_rps: f64| Some(Interval { low_rps, high_rps });
    let noise = GateCheck::of("url", 200.0, Some(170.0), 10.0)
        .with_intervals(i(185.0, 220.0), i(150.0, 195.0));
    let real = GateCheck::of("api", 200.0, Some(140.0), 10.0)
        .with_intervals(i(185.0, 220.0), i(130.0, 150.0));
    let g = Gate {
        baseline: "base.json".into(),
        max_drop_pct: 10.0,
        passed: noise.passed && real.passed,
        checks: vec![noise, real],
    };
    assert_eq!(
        gate_line(&g),
        "gate FAILED against base.json: url 170/s, 15% below the baseline's 200/s (within the noise: 150-195/s meets the baseline's 185-220/s); api 140/s, 30% below the baseline's 200/s (FAILED: 130-150/s is below the baseline's 185-220/s) (at most 10% allowed)"
    );
}

/// Issue 51: `--repeat N` said in one line made from the runs' figures.
#[test]
fn the_repeat_line_is_made_from_the_runs() {
    use iolab_model::capacity::Search;
    use iolab_report::capacity::repeat_line;
    let base = fixture();
    let run = |cap: Option<f64>, low_rps: f64, high_rps: f64| Search {
        capacity_rps: cap,
        interval: cap.map(|_| Interval { low_rps, high_rps }),
        ..base.searches[0].clone()
    };
    let runs = vec![
        run(Some(206.0), 190.0, 235.0),
        run(Some(213.0), 195.0, 240.0),
        run(None, 0.0, 0.0),
    ];
    let doc = CapacityFile::repeated("capacity", base.slo.clone(), runs, base.started_utc.clone());
    let r = doc.repeat.as_ref().unwrap();
    assert_eq!(doc.capacity_rps, Some(209.5));
    assert_eq!(r.intervals_holding_median, 2);
    let line = repeat_line(&doc).unwrap();
    assert_eq!(
        line,
        format!(
            "3 searches: 206, 213, none /s; median 210/s, max/min {}; 2 of 2 intervals hold the median; capacity {} over every run",
            num(213.0 / 206.0, 2),
            estimate(209.5, &r.interval.unwrap())
        )
    );
    assert!(text(&doc).contains(&line));
}

/// Issue 50 finding 8: a step the generator was too late to judge printed
/// "FAIL (the generator was the bottleneck: no verdict on the target ...)".
#[test]
fn r50_8_a_step_the_generator_could_not_judge_is_no_verdict() {
    use iolab_model::capacity::StepRecord;
    use iolab_report::capacity::{curve, step_line};
    let mut doc = fixture();
    let late = StepRecord {
        rate_rps: 9000.0,
        passed: false,
        generator_saturated: true,
        verdict: "the generator was the bottleneck: no verdict on the target (p99 1s > 200ms)"
            .into(),
        ..StepRecord::default()
    };
    let line = step_line(&late);
    assert!(line.contains(": no verdict (the generator"), "{line}");
    assert!(!line.contains("FAIL"), "{line}");
    doc.searches[0].steps = vec![late];
    let g = curve(&doc.searches[0]);
    let col = g.header.iter().position(|h| h == "verdict").unwrap();
    assert_eq!(g.rows[0][col], "no verdict");
}

/// Issue 50: a resource beside the binding one is listed with the rate it
/// binds at, and a change that cannot be said reads "cannot say" with what
/// would settle it, no number (and draws no curve).
#[test]
fn r50_25_beside_it_and_cannot_say_are_rendered_from_their_numbers() {
    use iolab_model::capacity::{Limit, Resource};
    let mut doc = fixture();
    let s = &mut doc.searches[0];
    let f = s.fit.as_mut().unwrap();
    f.binding.also = vec![Limit {
        resource: Resource::Pool,
        size: 50.0,
        name: Some("hikaricp".into()),
        hold_ms: 48.75,
        binds_at_rps: 50.0 / 48.75 * 1000.0,
        configured: true,
    }];
    let why = "cannot say: no signal names what binds; its PID (--pid N) would settle it";
    for w in s.what_if.iter_mut().filter(|w| !w.fitted) {
        w.cannot_say = Some(why.into());
        w.slo_capacity_rps = None;
        w.capacity_rps = None;
        w.points.clear();
    }
    let out = text(&doc);
    let beside = format!(
        "beside it: HikariCP's 50 connections, binding at ~{}/s",
        rate(50.0 / 48.75 * 1000.0)
    );
    assert!(out.contains(&beside), "{out}");
    assert!(out.contains(why), "{out}");
    let s = &doc.searches[0];
    for w in s.what_if.iter().filter(|w| !w.fitted) {
        let row = out
            .lines()
            .find(|l| l.trim_start().starts_with(&w.change))
            .unwrap_or_else(|| panic!("{}: {out}", w.change));
        assert!(row.contains("cannot say"), "{row}");
    }
    let (_, svg) = &iolab_report::capacity::charts(s)[0];
    for w in s.what_if.iter().filter(|w| !w.fitted) {
        assert!(!svg.contains(&w.change), "{}", w.change);
    }
}
