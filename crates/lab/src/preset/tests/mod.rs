//! Preset parsing, sweep expansion and time-scale: no other crate needed.

use std::time::Duration;

use iolab_model::batch::{TaskMix, WorkerKind};
use iolab_model::experiment::Work;
use iolab_model::{ConnectionMode, Driver, ModelKind};

use super::*;

fn plan(text: &str) -> ExperimentPlan {
    parse_plan(text, "t.toml", Overrides::default()).unwrap()
}

fn err(text: &str) -> String {
    parse_plan(text, "t.toml", Overrides::default())
        .unwrap_err()
        .0
}

const BASE: &str = r#"
name = "x"
description = "d"

[load]
steps = "sleep:100"
rate = 200
duration = "5s"
timeout = "2s"

[[targets]]
model = "pool"
threads = 20
"#;

#[test]
fn showdown_is_every_built_in_model_at_four_rates() {
    let p = load_plan("showdown", None).unwrap();
    assert_eq!(p.name, "showdown");
    assert_eq!(p.runs.len(), 24);
    let models: std::collections::BTreeSet<_> = p.runs.iter().map(|r| r.model).collect();
    assert_eq!(models.len(), ModelKind::built_in().count());
    assert_eq!(p.runs[0].name, "sequential-rate=50");
    assert_eq!(p.runs[5].name, "pool-rate=200");
    assert_eq!(p.runs[5].params.threads, Some(20));
    assert_eq!(p.runs[5].coordinates["rate"], 200);
    assert_eq!(p.runs[5].coordinates["model"], "pool");
    assert_eq!(p.scale, 1.0);
    assert_eq!(p.reps, 1);
    let Work::Http(w) = &p.runs[5].work else {
        panic!("http")
    };
    assert_eq!(w.steps.to_string(), "sleep:100");
    assert_eq!(w.timeout, Duration::from_secs(1));
    assert!(matches!(w.connections, ConnectionMode::KeepAlive { .. }));
    assert_eq!(w.driver.duration(), Some(Duration::from_secs(2)));
}

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
fn batch_presets_and_published_numbers() {
    let text = r#"
name = "e3"
description = "futures"
kind = "batch"
[batch]
tasks = "calls"
n = [10, 100]
ms = 1000
[[targets]]
model = "pool"
threads = 8
[[targets]]
model = "sequential"
[published]
sequential_ms = 100122
pool8_ms = 13057
"#;
    let p = parse_plan(
        text,
        "t",
        Overrides {
            scale: Some(0.01),
            reps: None,
        },
    )
    .unwrap();
    assert_eq!(p.runs.len(), 4);
    assert_eq!(p.runs[0].name, "pool-n=10");
    let Work::Batch(b) = &p.runs[1].work else {
        panic!()
    };
    assert_eq!(b.tasks, TaskMix::Calls { n: 100, ms: 10.0 });
    assert!(b.master.is_none());
    assert_eq!(p.published.as_ref().unwrap()["pool8_ms"], 13057);

    let text = r#"
name = "e1"
description = "master/worker"
kind = "batch"
[batch]
tasks = "mixed"
cpu = 2
io = 2
cpu_terms = [1000, 2000]
io_ms = [50.0]
workers = [4, 8]
worker = ["blocking", "shared-pool"]
shared_pool = 3
seed = 7
[[targets]]
model = "pool"
"#;
    let p = plan(text);
    assert_eq!(p.runs.len(), 4);
    assert_eq!(p.runs[3].name, "pool-workers=8-worker=shared-pool");
    let Work::Batch(b) = &p.runs[3].work else {
        panic!()
    };
    let m = b.master.as_ref().unwrap();
    assert_eq!(
        (m.workers, m.worker, m.shared_pool),
        (8, WorkerKind::SharedPool, Some(3))
    );
    assert_eq!(b.seed, 7);
}

#[test]
fn bad_presets_name_file_line_and_field() {
    let e = err(&BASE.replace("threads = 20", "thread = 20"));
    assert!(
        e.starts_with("t.toml:13: field 'targets[0].thread': unknown field 'thread'"),
        "{e}"
    );
    let e = err(&BASE.replace("threads = 20", "threads = \"twenty\""));
    assert!(
        e.starts_with("t.toml:11: invalid type: string \"twenty\", expected a whole number"),
        "{e}"
    );
    let e = err(&BASE.replace("threads = 20", "threads = 0"));
    assert!(
        e.contains(":13: field 'targets[0].threads'") && e.contains("out of range"),
        "{e}"
    );
    let e = err(&BASE.replace("rate = 200", "rate = -5"));
    assert!(
        e.contains(":7: field 'load.rate'") && e.contains("above zero"),
        "{e}"
    );
    let e = err(&BASE.replace("\"sleep:100\"", "\"nap:3\""));
    assert!(
        e.contains(":6: field 'load.steps'") && e.contains("unknown step"),
        "{e}"
    );
    let e = err(&BASE.replace("\"5s\"", "\"5\""));
    assert!(
        e.contains(":8: field 'load.duration'") && e.contains("missing unit"),
        "{e}"
    );
    let e = err(&BASE.replace("\"pool\"", "\"fibers\""));
    assert!(
        e.contains(":12: field 'targets.model'") && e.contains("unknown variant"),
        "{e}"
    );
    let e = err(&BASE.replace("rate = 200\n", ""));
    assert!(
        e.starts_with("t.toml:5: field 'load.rate': an open loop needs `rate`"),
        "{e}"
    );
    let e = err(&BASE.replace("rate = 200", "rate = 200\nconcurrency = 3"));
    assert!(e.starts_with("t.toml:8: field 'load.concurrency'"), "{e}");
    let e = err(&BASE.replace("name = \"x\"\n", ""));
    assert!(e.contains("missing field `name`"), "{e}");
    let e = err(&format!(
        "{BASE}\n[[targets]]\nmodel = \"pool\"\nthreads = 20\n"
    ));
    assert!(e.contains("both be named 'pool'"), "{e}");
    let e = err(&format!("{BASE}\n[[targets]]\nmodel = \"virtual\"\n"));
    assert!(e.starts_with("t.toml:16: field 'targets[1].model'"), "{e}");
    let e = err(&BASE.replace("description = \"d\"", "description = \"d\"\nscale = 2"));
    assert!(
        e.contains(":4: field 'scale'") && e.contains("at most 1"),
        "{e}"
    );
    let e = err("name = \"x\"\ndescription = [\n");
    assert!(e.starts_with("t.toml:"), "{e}");
    assert!(!e.contains('\n'), "one line: {e}");
}

#[test]
fn bad_names_and_overrides() {
    let e = load_plan("no-such-preset", None).unwrap_err().0;
    assert!(e.contains("iolab presets"), "{e}");
    let e = load_plan("showdown", Some(0.0)).unwrap_err().0;
    assert!(e.starts_with("--scale:"), "{e}");
    let e = load_plan("/nonexistent/x.toml", None).unwrap_err().0;
    assert!(e.starts_with("/nonexistent/x.toml: cannot read"), "{e}");
}

#[test]
fn custom_commands_and_labels() {
    let text = format!(
        "{BASE}\n[[targets]]\nmodel = \"pool\"\nlabel = \"tomcat\"\nruntime = \"jvm\"\ncommand = [\"java\", \"-jar\", \"t.jar\", \"--port={{port}}\"]\n"
    );
    let p = plan(&text);
    assert_eq!(p.runs[1].name, "tomcat");
    assert_eq!(p.runs[1].coordinates["target"], "tomcat");
    let Work::Http(w) = &p.runs[1].work else {
        panic!()
    };
    assert_eq!(w.command.as_ref().unwrap()[3], "--port={port}");
    // runtime = "jvm" without a command: the runner starts targets/jvm.
    let p = plan(&format!(
        "{BASE}\n[[targets]]\nmodel = \"virtual\"\nruntime = \"jvm\"\nsynchronized = [false, true]\n"
    ));
    assert_eq!(p.runs[2].name, "virtual-synchronized=true");
    assert_eq!(p.runs[2].coordinates["synchronized"], true);
    let Work::Http(w) = &p.runs[2].work else {
        panic!()
    };
    assert!(w.command.is_none());
    let e = err(&format!(
        "{BASE}\n[[targets]]\nmodel = \"thread-per-request\"\nruntime = \"jvm\"\n"
    ));
    assert!(
        e.contains("field 'targets[1].model'") && e.contains("has no jvm target"),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}\n[[targets]]\nmodel = \"loop-async\"\nruntime = \"jvm\"\nsynchronized = true\n"
    ));
    assert!(e.contains("synchronized does not apply"), "{e}");
}

#[test]
fn test_presets_on_disk_parse() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../presets/test");
    let all = list(std::path::Path::new(dir));
    assert!(all.len() >= 3, "{all:?}");
    for p in &all {
        assert!(p.plan.is_ok(), "{}: {:?}", p.name, p.plan);
    }
    // The embedded showdown is listed even when the folder lacks it.
    assert!(all.iter().any(|p| p.name == "showdown"));
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

#[test]
fn target_rate_needs_an_open_loop() {
    let e = err(r#"
name = "x"
description = "d"
[load]
steps = "sleep:1"
driver = "closed"
concurrency = 2
requests = 10
[[targets]]
model = "pool"
rate = 5
"#);
    assert!(e.contains("targets[0].rate"), "{e}");
}

#[test]
fn every_embedded_preset_loads_and_its_published_rows_name_real_runs() {
    for (name, _) in EMBEDDED {
        let p = load_plan(name, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!p.runs.is_empty(), "{name}");
        let Some(published) = &p.published else {
            continue;
        };
        let rows = published["rows"].as_array().expect("published.rows");
        for row in rows {
            let sel = row["run"].as_object().expect("run selector table");
            let found = p.runs.iter().any(|r| {
                sel.iter().all(|(k, v)| {
                    r.coordinates
                        .get(k)
                        .is_some_and(|c| match (c.as_f64(), v.as_f64()) {
                            (Some(a), Some(b)) => a == b,
                            _ => c == v,
                        })
                })
            });
            assert!(found, "{name}: published row {row} names no run");
        }
    }
}

#[test]
fn a_batch_targets_workers_knob_is_not_a_master() {
    let p = load_plan("e3-futures", None).unwrap();
    let run = p
        .runs
        .iter()
        .find(|r| r.name == "scheduled-n=100")
        .expect("scheduled-n=100");
    let Work::Batch(b) = &run.work else {
        panic!("batch run")
    };
    assert!(b.master.is_none(), "{b:?}");
    assert_eq!(run.params.workers, Some(8));
    let e1 = load_plan("e1-actors", None).unwrap();
    let Work::Batch(b) = &e1.runs[0].work else {
        panic!("batch run")
    };
    assert_eq!(b.master.as_ref().map(|m| m.workers), Some(4));
}
