//! `iolab batch` end to end: real threads and timers in the real binary;
//! JSON shape, sweeps, the table, and one-line usage errors (exit 2).

mod common;

use std::process::Command;

use assert_cmd::prelude::*;
use predicates::prelude::*;
use serde_json::Value;

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

fn batch_json(args: &[&str]) -> Value {
    let out = iolab()
        .arg("batch")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let doc = common::json_ok(&out);
    assert_eq!(doc["schema"], "iolab.batch/1");
    doc
}

#[test]
fn pool_run_prints_the_batch_document() {
    let doc = batch_json(&[
        "--model",
        "pool",
        "--threads",
        "4",
        "--calls",
        "8",
        "--ms",
        "50",
    ]);
    let run = &doc["runs"][0];
    assert_eq!(run["model"], "pool");
    assert_eq!(run["tasks"], 8);
    assert_eq!(run["failed"], 0);
    assert_eq!(run["params"]["threads"], 4);
    assert_eq!(run["params"]["calls"], 8);
    assert_eq!(run["params"]["seed"], 42);
    assert_eq!(run["by_type"]["io"]["count"], 8);
    // Two rounds of 50 ms through 4 threads.
    let total = run["total_s"].as_f64().unwrap();
    assert!((0.099..0.5).contains(&total), "{run}");
    assert!(run["peak_threads"].as_u64().unwrap() >= 4, "{run}");
    assert!(run["peak_rss_mb"].as_f64().unwrap() > 0.0, "{run}");
}

#[test]
fn calls_and_models_sweep_one_run_per_value() {
    let doc = batch_json(&[
        "--model",
        "sequential,loop-async",
        "--calls",
        "1,3",
        "--ms",
        "20",
    ]);
    let runs = doc["runs"].as_array().unwrap();
    let got: Vec<(String, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["model"].as_str().unwrap().to_string(),
                r["tasks"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("sequential", 1),
        ("sequential", 3),
        ("loop-async", 1),
        ("loop-async", 3),
    ];
    assert_eq!(got, want.map(|(m, n)| (m.to_string(), n)));
    // Sequential pays 3 x 20 ms for 3 calls; loop-async about 20 ms.
    assert!(runs[1]["total_s"].as_f64().unwrap() >= 0.059);
    assert!(
        runs[3]["total_s"].as_f64().unwrap() < 0.059 * 2.0,
        "{}",
        runs[3]
    );
}

#[test]
fn e1_master_sweeps_workers_and_worker_kinds() {
    let doc = batch_json(&[
        "--tasks",
        "e1:10:10",
        "--scale",
        "0.001",
        "--workers",
        "2,4",
        "--worker",
        "blocking,timer",
    ]);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    let coords: Vec<(String, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["params"]["worker"].as_str().unwrap().into(),
                r["params"]["workers"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(coords[0], ("blocking".into(), 2));
    assert_eq!(coords[3], ("timer".into(), 4));
    for r in runs {
        assert_eq!(r["tasks"], 20);
        assert_eq!(r["by_type"]["cpu"]["count"], 10, "{r}");
        assert_eq!(r["by_type"]["io"]["count"], 10, "{r}");
        assert_eq!(r["params"]["scale"], 0.001);
    }
    assert_eq!(runs[0]["model"], "pool");
    assert_eq!(runs[3]["model"], "loop-async");
}

#[test]
fn table_is_the_default_output() {
    iolab()
        .args([
            "batch",
            "--model",
            "thread-per-request",
            "--max-threads",
            "3",
            "--calls",
            "6",
            "--ms",
            "10",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("model").and(predicate::str::contains("total")))
        .stdout(
            predicate::str::contains("thread-per-request")
                .and(predicate::str::contains("max_threads=3")),
        );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["--model", "fibers"], "unknown model 'fibers'"),
        (&["--model", "virtual"], "not built in"),
        (&["--scale", "0"], "--scale 0"),
        (&["--tasks", "e2"], "--tasks 'e2'"),
        (&["--tasks", "e1:x:1"], "e1:100:100"),
        (&["--calls", "0"], "--calls 0"),
        (&["--worker", "actor"], "unknown worker 'actor'"),
        (&["--tasks", "e1", "--model", "pool"], "--worker"),
        (&["--threads", "0"], "threads = 0 is out of range"),
        (&["--max-time", "soon"], "--max-time 'soon'"),
        (&["e1-actors", "--model", "pool"], "with a preset only"),
    ];
    for (args, needle) in cases {
        let out = iolab().arg("batch").args(*args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn max_time_stops_a_long_batch_and_says_so() {
    let doc = batch_json(&[
        "--model",
        "sequential",
        "--calls",
        "1000",
        "--ms",
        "10",
        "--max-time",
        "200ms",
    ]);
    let run = &doc["runs"][0];
    assert!(run["total_s"].as_f64().unwrap() < 2.0, "{run}");
    assert!(
        run["counters"]["skipped"].as_f64().unwrap() > 500.0,
        "{run}"
    );
    assert!(
        run["failure"].as_str().unwrap().contains("--max-time"),
        "{run}"
    );
}

/// The OS refusing threads is an outcome, not a crash. Run as user `nobody`
/// with RLIMIT_NPROC = 100 so no other process on the machine loses PIDs.
#[test]
fn thread_limit_is_recorded_and_the_batch_completes() {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(false);
    let tools = ["setpriv", "prlimit"].iter().all(|t| {
        Command::new(t)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !(root && tools) {
        eprintln!("skipped: needs root, setpriv and prlimit to lower the thread limit safely");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_iolab");
    // `nobody` must be able to reach the binary.
    let mut dir = std::path::Path::new(bin).to_path_buf();
    while dir.pop() {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(&dir) {
            let mut p = meta.permissions();
            p.set_mode(p.mode() | 0o005);
            let _ = std::fs::set_permissions(&dir, p);
        }
    }
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "prlimit",
            "--nproc=100:100",
            "--",
        ])
        .args([
            bin,
            "batch",
            "--json",
            "--model",
            "thread-per-request",
            "--calls",
            "300",
            "--ms",
            "300",
        ])
        .output()
        .unwrap();
    common::assert_ok(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &doc["runs"][0];
    let failed = run["failed"].as_u64().unwrap();
    let done = run["by_type"]["io"]["count"].as_u64().unwrap();
    assert!(failed > 0, "{run}");
    assert_eq!(failed + done, 300, "{run}");
    assert!(
        run["failure"].as_str().unwrap().contains("refused"),
        "{run}"
    );
    assert!(run["peak_threads"].as_u64().unwrap() <= 110, "{run}");
}

#[test]
fn io_on_real_postgres_is_recorded_and_a_missing_address_is_a_usage_error() {
    // CI exports IOLAB_PG (scripts/test starts a real PostgreSQL).
    let pg = std::env::var("IOLAB_PG").expect("IOLAB_PG: run under scripts/test");
    let doc = batch_json(&[
        "--io",
        "pg",
        "--pg",
        &pg,
        "--model",
        "loop-async",
        "--calls",
        "20",
        "--ms",
        "50",
    ]);
    let run = &doc["runs"][0];
    assert_eq!(run["params"]["io"], "pg", "{run}");
    assert_eq!(
        (run["tasks"].as_u64(), run["failed"].as_u64()),
        (Some(20), Some(0))
    );
    // Ten connections: two rounds of 50 ms at least.
    assert!(run["total_s"].as_f64().unwrap() >= 0.095, "{run}");

    iolab()
        .args(["batch", "--io", "pg", "--calls", "3"])
        .env_remove("IOLAB_PG")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--pg URL").and(predicate::str::contains("IOLAB_PG")));
    iolab()
        .args(["batch", "--io", "mc"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("sleep, http or pg"));
}
