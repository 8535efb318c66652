//! The library runner in process, with targets that fail in the ways real
//! ones do (no built-in server needed): each failure is recorded as the run's
//! outcome, the experiment completes, and the results folder is valid.

use std::sync::atomic::Ordering;
use std::time::Duration;

use iolab_lab::preset::{parse_plan, Overrides};
use iolab_lab::{results, run, LabError, RunOptions, Silent};
use iolab_model::runs::{Outcome, RUNS_SCHEMA};

const FAILING: &str = r#"
name = "failing"
description = "targets that crash, hang, or talk nonsense"
warmup = "100ms"

[load]
steps = "sleep:10"
rate = [10, 20]
duration = "500ms"
timeout = "500ms"

[[targets]]
model = "pool"
label = "crasher"
command = ["sh", "-c", "echo 'cannot bind' >&2; exit 3"]

[[targets]]
model = "pool"
label = "hang"
command = ["sh", "-c", "exec sleep 30", "{port}"]

[[targets]]
model = "loop-async"
label = "chatty"
command = ["sh", "-c", "echo hello; exec sleep 30"]
"#;

fn opts(dir: &std::path::Path) -> RunOptions {
    RunOptions {
        start_timeout: Duration::from_millis(500),
        ..RunOptions::new(dir)
    }
}

#[test]
fn failed_targets_are_recorded_and_the_experiment_completes() {
    let plan = parse_plan(FAILING, "failing.toml", Overrides::default()).unwrap();
    assert_eq!(plan.runs.len(), 6);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    let file = run(&plan, &opts(&out), &Silent).unwrap();
    assert!(file.complete);
    assert_eq!(file.runs.len(), 6);
    for r in &file.runs {
        let Outcome::StartFailed { detail } = &r.outcome else {
            panic!("{}: {:?}", r.name, r.outcome)
        };
        let want = if r.name.starts_with("crasher") {
            "exit status 3; stderr: cannot bind"
        } else if r.name.starts_with("hang") {
            "not healthy within the start timeout"
        } else {
            "is not a URL"
        };
        assert!(detail.contains(want), "{}: {detail}", r.name);
        assert!(r.attack.is_none());
    }
    // What is on disk is what was returned.
    let saved = iolab_model::runs::load(&out).unwrap();
    assert_eq!(saved.schema, RUNS_SCHEMA);
    assert_eq!(saved, file);
    assert!(out.join(results::ENVIRONMENT_JSON).is_file());
    // A second run into the same folder is refused before anything starts.
    let again = run(&plan, &opts(&out), &Silent).unwrap_err();
    assert!(matches!(again, LabError::Invalid(m) if m.contains("belongs to another run")));
}

#[test]
fn cancelled_before_the_first_run_writes_an_incomplete_file() {
    let plan = parse_plan(FAILING, "failing.toml", Overrides::default()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let o = opts(tmp.path());
    o.cancel.store(true, Ordering::Relaxed);
    let file = run(&plan, &o, &Silent).unwrap();
    assert!(!file.complete);
    assert!(file.runs.is_empty());
    assert!(file.finished_utc.is_some());
    assert!(
        !iolab_model::runs::load(&tmp.path().join(results::RUNS_JSON))
            .unwrap()
            .complete
    );
}
