//! A runtime's real defaults come from its manifest (`runtimes/<name>/runtime.toml`) into
//! predictions and sentences: gunicorn's backlog of 2048 and `2 x cores + 1` workers,
//! uvicorn's one event-loop thread per process, asyncio's default executor, and a foreign
//! service that says what it is built on (`runtime = "python"`) gets the same. No server is
//! started: these are the plan and the prediction.

use iolab_lab::preset::{parse_plan, Overrides};
use iolab_lab::targets::{predict_run, Defaults};
use iolab_model::experiment::{ExperimentPlan, RunSpec};
use iolab_model::ModelKind;

fn plan(text: &str) -> ExperimentPlan {
    parse_plan(text, "test.toml", Overrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn one(text: &str) -> RunSpec {
    let mut p = plan(text);
    assert_eq!(p.runs.len(), 1, "{:?}", p.runs);
    p.runs.remove(0)
}

const LOAD: &str = r#"
name = "t"
description = "t"
[load]
steps = "sleep:100"
rate = 3000
duration = "2s"
timeout = "1s"
"#;

#[test]
fn gunicorn_prediction_says_its_backlog_of_2048_not_tomcats_100() {
    let spec = one(&format!(
        "{LOAD}[[targets]]\nmodel = \"prefork\"\nruntime = \"python\"\n"
    ));
    let d = Defaults::of(&spec);
    let knobs = d.knobs(&spec, 2);
    let backlog = knobs.get("backlog").expect("prefork reads backlog");
    assert_eq!(backlog.value, Some(2048));
    assert_eq!(backlog.setting, "gunicorn --backlog");
    assert!(!backlog.set);
    let workers = knobs.get("processes").unwrap();
    assert_eq!(
        (workers.value, workers.default.as_str()),
        (Some(5), "2 * cores + 1")
    );
    let p = predict_run(&spec, 2).expect("a prediction");
    // 3,000 req/s against 5 workers and 2,048 queued connections: the backlog fills.
    assert!(p.errors.get("reset").copied().unwrap_or(0) > 0, "{p:?}");
    assert!(
        p.explanation
            .contains("5 worker processes each hold a request for 100 ms (gunicorn --workers 5, its default 2 * cores + 1)"),
        "{}",
        p.explanation
    );
    assert!(
        p.explanation
            .contains("the backlog (gunicorn --backlog 2,048, its default) were full"),
        "{}",
        p.explanation
    );
    assert!(
        !p.explanation.contains("backlog of 100"),
        "{}",
        p.explanation
    );
}

#[test]
fn uvicorn_loop_blocking_holds_one_event_loop_thread_not_one_per_core() {
    let spec = one(&format!(
        "{LOAD}[[targets]]\nmodel = \"loop-blocking\"\nruntime = \"python\"\n"
    ));
    for cores in [2, 8] {
        let p = predict_run(&spec, cores).expect("a prediction");
        assert_eq!(p.capacity_rps, Some(10.0), "{cores} cores: {p:?}");
        assert!(
            p.explanation.starts_with(
                "1 event-loop worker holds each request for 100 ms, so capacity is 10.0 req/s"
            ),
            "{}",
            p.explanation
        );
    }
    // The built-in loop has a worker per core: two on two cores.
    let builtin = one(&format!("{LOAD}[[targets]]\nmodel = \"loop-blocking\"\n"));
    assert_eq!(predict_run(&builtin, 2).unwrap().capacity_rps, Some(20.0));
}

#[test]
fn asyncio_default_executor_sizes_uvicorn_loop_offload() {
    let spec = one(&format!(
        "{LOAD}[[targets]]\nmodel = \"loop-offload\"\nruntime = \"python\"\n"
    ));
    let knobs = Defaults::of(&spec).knobs(&spec, 2);
    assert_eq!(
        knobs.phrase("offload").unwrap(),
        "asyncio's default executor max_workers 6, its default min(32, cores + 4)"
    );
    let p = predict_run(&spec, 2).unwrap();
    assert!(
        p.explanation.starts_with("6 offload threads hold its IO"),
        "{}",
        p.explanation
    );
}

#[test]
fn a_set_knob_is_said_to_be_set() {
    let spec = one(&format!(
        "{LOAD}[[targets]]\nmodel = \"prefork\"\nruntime = \"python\"\nprocesses = 9\n"
    ));
    let p = predict_run(&spec, 2).unwrap();
    assert!(
        p.explanation.starts_with(
            "9 worker processes each hold a request for 100 ms (gunicorn --workers 9, as set)"
        ),
        "{}",
        p.explanation
    );
}

#[test]
fn a_foreign_gunicorn_service_takes_gunicorns_defaults() {
    let spec = one(&format!(
        "{LOAD}[[targets]]\nmodel = \"prefork\"\nruntime = \"python\"\nurl = \"http://127.0.0.1:9\"\nrequest = {{ path = \"/\" }}\n"
    ));
    assert_eq!(spec.model, ModelKind::Prefork);
    let d = Defaults::of(&spec);
    assert_eq!(d.effective(&spec, 2).backlog(), 2048);
    let p = predict_run(&spec, 2).unwrap();
    assert!(
        p.explanation.contains("gunicorn --backlog 2,048"),
        "{}",
        p.explanation
    );
    // Without runtime, the knob table's (Tomcat's acceptCount) is all iolab can assume,
    // and the sentence says it is iolab's own default.
    let bare = one(&format!(
        "{LOAD}[[targets]]\nmodel = \"prefork\"\nurl = \"http://127.0.0.1:9\"\nrequest = {{ path = \"/\" }}\n"
    ));
    let p = predict_run(&bare, 2).unwrap();
    assert!(
        p.explanation
            .contains("iolab serve --backlog 100, its default"),
        "{}",
        p.explanation
    );
}

#[test]
fn a_foreign_target_naming_an_unknown_runtime_is_refused() {
    let e = parse_plan(
        &format!("{LOAD}[[targets]]\nmodel = \"prefork\"\nruntime = \"cobol\"\nurl = \"http://127.0.0.1:9\"\nrequest = {{ path = \"/\" }}\n"),
        "test.toml",
        Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("unknown runtime 'cobol'") && e.contains("what the service is built on"),
        "{e}"
    );
}

/// Go's defaults come from its manifest: GOMAXPROCS = cores, pgxpool's max(4, cores)
/// connections, and thread-per-request capped below the runtime's 10,000 threads.
#[test]
fn go_predictions_use_gomaxprocs_pgxpool_and_the_locked_thread_cap() {
    let spec = one(&format!(
        "{LOAD}[[targets]]\nmodel = \"virtual\"\nruntime = \"go\"\n"
    ));
    let knobs = Defaults::of(&spec).knobs(&spec, 8);
    let workers = knobs.get("workers").unwrap();
    assert_eq!(
        (workers.value, workers.setting.as_str()),
        (Some(8), "GOMAXPROCS")
    );
    let pg = knobs.get("pg_pool").unwrap();
    assert_eq!((pg.value, pg.default.as_str()), (Some(8), "max(4, cores)"));
    assert_eq!(
        Defaults::of(&spec)
            .knobs(&spec, 2)
            .get("pg_pool")
            .unwrap()
            .value,
        Some(4)
    );
    let locked = one(&format!(
        "{LOAD}[[targets]]\nmodel = \"thread-per-request\"\nruntime = \"go\"\n"
    ));
    let p = predict_run(&locked, 2).expect("a prediction");
    assert!(
        p.explanation.contains("9,000 request threads")
            && p.explanation
                .contains("locked OS threads 9,000, its default"),
        "{}",
        p.explanation
    );
}
