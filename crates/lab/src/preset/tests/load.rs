//! The `[load]` table: time-scale, sweeps as a cartesian product, the
//! closed loop and connections, a target's own steps and rates.

use std::time::Duration;

use iolab_model::experiment::Work;
use iolab_model::{ConnectionMode, Driver, ModelKind};

use super::*;

#[test]
fn scale_shrinks_durations_and_raises_rates() {
    let p = parse_plan(
        BASE,
        "t.toml",
        Overrides {
            scale: Some(0.1),
            reps: Some(3),
        },
    )
    .unwrap();
    assert_eq!(p.scale, 0.1);
    assert_eq!(p.reps, 3);
    assert_eq!(p.warmup, Duration::from_millis(100));
    let r = &p.runs[0];
    assert_eq!(r.scale, 0.1);
    // The name keeps the preset's (unscaled) coordinates.
    assert_eq!(r.name, "pool");
    let Work::Http(w) = &r.work else { panic!() };
    assert_eq!(w.steps.to_string(), "sleep:10");
    assert_eq!(w.timeout, Duration::from_millis(200));
    assert_eq!(w.driver.peak_rate(), Some(2000.0));
    assert_eq!(w.driver.duration(), Some(Duration::from_millis(500)));
    // Little's law: the same number of requests is planned.
    assert_eq!(w.driver.planned(), Some(1000));
}

#[test]
fn file_scale_is_the_default_and_flag_wins() {
    let text = BASE.replace("description = \"d\"", "description = \"d\"\nscale = 0.5");
    assert_eq!(plan(&text).scale, 0.5);
    let p = parse_plan(
        &text,
        "t",
        Overrides {
            scale: Some(0.2),
            reps: None,
        },
    )
    .unwrap();
    assert_eq!(p.scale, 0.2);
}

#[test]
fn lists_sweep_as_a_cartesian_product() {
    let text = r#"
name = "s"
description = "d"
[load]
steps = ["sleep:10", "par(sleep:10,sleep:20)"]
rate = [10, 20.5]
duration = "1s"
[[targets]]
model = ["pool", "thread-per-request"]
threads = [2, 4]
[[targets]]
model = "loop-async"
"#;
    let p = plan(text);
    // (2 models x 2 threads + 1) x 2 steps x 2 rates
    assert_eq!(p.runs.len(), (2 * 2 + 1) * 2 * 2);
    let names: Vec<_> = p.runs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names[0], "pool-threads=2-steps=sleep:10-rate=10");
    assert_eq!(names[1], "pool-threads=2-steps=sleep:10-rate=20.5");
    assert!(names.contains(&"loop-async-steps=par(sleep:10,sleep:20)-rate=20.5"));
    // A swept knob is a coordinate of every run; loop-async has none.
    let la = p
        .runs
        .iter()
        .find(|r| r.model == ModelKind::LoopAsync)
        .unwrap();
    assert!(!la.coordinates.contains_key("threads"));
    let tpr = p
        .runs
        .iter()
        .find(|r| r.model == ModelKind::ThreadPerRequest)
        .unwrap();
    assert_eq!(tpr.coordinates["threads"], 2);
    assert_eq!(tpr.params.threads, Some(2));
}

#[test]
fn closed_loop_and_new_connections() {
    let text = r#"
name = "c"
description = "d"
[load]
steps = "sleep:50"
driver = "closed"
concurrency = [1, 8]
requests = 100
connections = "new-per-request"
max_connections = 50
[[targets]]
model = "sequential"
"#;
    let p = plan(text);
    assert_eq!(p.runs.len(), 2);
    assert_eq!(p.runs[1].name, "sequential-concurrency=8");
    let Work::Http(w) = &p.runs[1].work else {
        panic!()
    };
    assert_eq!(
        w.driver,
        Driver::Closed {
            concurrency: 8,
            requests: Some(100),
            duration: None
        }
    );
    assert_eq!(w.connections, ConnectionMode::NewPerRequest { max: 50 });
    assert_eq!(w.timeout, expand::DEFAULT_TIMEOUT);
}

#[test]
fn a_target_may_bring_its_own_steps_and_rates() {
    let p = plan(&format!(
        "{BASE}\n[[targets]]\nmodel = \"loop-async\"\nsteps = \"par(sleep:200,sleep:500)\"\nrate = [10, 1000]\n"
    ));
    assert_eq!(p.runs.len(), 3);
    let steps = |i: usize| match &p.runs[i].work {
        Work::Http(w) => (w.steps.to_string(), w.driver.peak_rate()),
        Work::Batch(_) => unreachable!(),
    };
    assert_eq!(steps(0), ("sleep:100".to_string(), Some(200.0)));
    assert_eq!(
        steps(1),
        ("par(sleep:200,sleep:500)".to_string(), Some(10.0))
    );
    assert_eq!(steps(2).1, Some(1000.0));
    assert_eq!(p.runs[2].name, "loop-async-rate=1000");
}

/// Issue 35: the warm-up could only be bounded by time; `warmup_requests`
/// caps its requests, and a cap of 0 is refused (use `warmup = "0s"`).
#[test]
fn r35_warmup_requests_caps_the_warm_up() {
    let text = BASE.replace(
        "description = \"d\"",
        "description = \"d\"\nwarmup_requests = 20",
    );
    assert_eq!(plan(&text).warmup_requests, Some(20));
    assert_eq!(plan(BASE).warmup_requests, None);
    let e = err(&BASE.replace(
        "description = \"d\"",
        "description = \"d\"\nwarmup_requests = 0",
    ));
    assert!(e.contains("warmup_requests"), "{e}");
}
