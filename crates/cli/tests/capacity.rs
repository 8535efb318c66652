//! `iolab capacity` end to end against the built-in pool model: the answer
//! within 15% of c / S, the fit naming the pool's threads, a document that
//! matches its schema and re-renders with `iolab report`; bad input is one
//! line and exit 2. And `iolab attack` with a vegeta targets file.

mod common;

use common::serve;

use std::process::Command;

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

fn schema() -> serde_json::Value {
    let text = include_str!("../../../schema/capacity.schema.json");
    serde_json::from_str(text).unwrap()
}

#[test]
fn finds_a_pools_capacity_and_names_its_threads() {
    // pool(10) at sleep:50: 10 / 0.05 s = 200 req/s (the showdown's pool(20)
    // at sleep:100, at half the time-scale).
    let s = serve(&["--model", "pool", "--threads", "10"]);
    let out_dir = tempfile::tempdir().unwrap();
    let out = iolab()
        .args([
            "capacity",
            &format!("{}/work?steps=sleep:50", s.url),
            "--slo",
            "p99<150ms,success>=99%",
            "--precision",
            "10%",
            "--start",
            "50",
            "--pid",
            &s.child.id().to_string(),
            "--json",
            "--quiet",
            "--out",
        ])
        .arg(out_dir.path())
        .output()
        .unwrap();
    let doc = common::json_ok(&out);
    let errors: Vec<String> = jsonschema::validator_for(&schema())
        .unwrap()
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let cap = doc["capacity_rps"].as_f64().expect("a capacity");
    assert!(
        (cap - 200.0).abs() <= 30.0,
        "capacity {cap} vs 200: {}",
        doc["searches"][0]["outcome"]
    );
    let s0 = &doc["searches"][0];
    assert!(s0["bracket_width_pct"].as_f64().unwrap() <= 10.0 + 1e-9);
    let fit = &s0["fit"];
    assert_eq!(fit["limit"], "concurrency", "{fit}");
    let c = fit["concurrency"].as_f64().unwrap();
    assert!((c - 10.0).abs() <= 1.5, "concurrency {c}: {fit}");
    assert!(fit["sentence"].as_str().unwrap().contains("pool of about"));
    let what_if = s0["what_if"].as_array().unwrap();
    assert!(what_if.iter().any(|w| w["fitted"] == true));
    // Every step carries its attack, with honest books.
    for st in s0["steps"].as_array().unwrap() {
        let r = &st["attack"]["requests"];
        assert_eq!(
            r["planned"].as_u64(),
            Some(r["sent"].as_u64().unwrap() + r["not_sent"].as_u64().unwrap())
        );
    }
    // The saved document re-renders as text and HTML.
    let saved = out_dir.path().join("capacity.json");
    let text = iolab().args(["report"]).arg(&saved).output().unwrap();
    common::assert_ok(&text);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("capacity ") && text.contains("behaves like a pool"),
        "{text}"
    );
    let html = std::fs::read_to_string(out_dir.path().join("report.html")).unwrap();
    assert!(
        html.contains("<svg") && html.contains("pool(threads="),
        "no chart"
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for args in [
        vec!["capacity", "http://127.0.0.1:1/", "--slo", "p99<fast"],
        vec!["capacity", "http://127.0.0.1:1/", "--precision", "0%"],
        vec![
            "capacity",
            "http://127.0.0.1:1/",
            "--start",
            "100",
            "--max",
            "10",
        ],
        vec!["capacity", "ftp://127.0.0.1:1/"],
        vec!["capacity", "http://127.0.0.1:1/", "-H", "NoColon"],
        vec!["capacity", "http://127.0.0.1:1/", "--pid", "999999999"],
        vec![
            "attack",
            "http://127.0.0.1:1/",
            "-H",
            "Content-Length: 5",
            "--rate",
            "1",
            "-d",
            "1s",
        ],
        vec![
            "attack",
            "--targets",
            "/nonexistent/targets.txt",
            "--rate",
            "1",
            "-d",
            "1s",
        ],
        vec![
            "attack",
            "http://127.0.0.1:1/",
            "--body",
            "x",
            "--body-file",
            "/etc/hostname",
            "--rate",
            "1",
            "-d",
            "1s",
        ],
    ] {
        let out = iolab().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn attack_sends_a_targets_file_in_turn() {
    let s = serve(&["--model", "loop-async"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("targets.txt");
    std::fs::write(
        &file,
        format!(
            "# two requests, in turn\nGET {0}/work?steps=sleep:1\nX-Test: 1\n\nGET {0}/health\n",
            s.url
        ),
    )
    .unwrap();
    let out = iolab()
        .args(["attack", "--targets"])
        .arg(&file)
        .args([
            "--rate",
            "40",
            "--duration",
            "500ms",
            "-H",
            "Accept: text/plain",
            "--json",
            "-q",
        ])
        .output()
        .unwrap();
    let doc = common::json_ok(&out);
    assert_eq!(doc["requests"]["ok"], doc["requests"]["planned"], "{doc}");
    assert!(doc["target"]
        .as_str()
        .unwrap()
        .ends_with("/work?steps=sleep:1"));
}
