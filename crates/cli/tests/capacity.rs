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
    common::assert_capacity_schema(&doc);
    let cap = doc["capacity_rps"].as_f64().expect("a capacity");
    assert!(
        (cap - 200.0).abs() <= 30.0,
        "capacity {cap} vs 200: {}",
        doc["searches"][0]["outcome"]
    );
    let s0 = &doc["searches"][0];
    assert!(s0["bracket_width_pct"].as_f64().unwrap() <= 10.0 + 1e-9);
    let fit = &s0["fit"];
    let b = &fit["binding"];
    assert_eq!(b["resource"], "threads", "{fit}");
    // The CPU per request is the slope of CPU against rate when it rose;
    // a sleeping pool burns so little that it may not, and then the median
    // is used and the evidence says which (it once said "slope" of a median).
    let method = fit["cpu_method"].as_str().expect("a CPU method");
    let phrase = match method {
        "slope" => "(the slope of CPU against rate)",
        "median" => "(the median over the steps: no rising slope of CPU against rate to read)",
        other => panic!("cpu_method {other}"),
    };
    let cpu_line = b["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["text"].as_str())
        .find(|t| t.starts_with("CPU "))
        .unwrap_or_else(|| panic!("no CPU evidence: {b}"));
    assert!(cpu_line.contains(phrase), "{method}: {cpu_line}");
    // A URL with --pid is not pinned: the process's CPU, and no core read.
    assert_eq!(fit["cpu_source"], "process", "{fit}");
    assert!(s0["steps"][0].get("core_busy_cores").is_none());
    let c = fit["concurrency"].as_f64().unwrap();
    assert!((c - 10.0).abs() <= 1.5, "concurrency {c}: {fit}");
    assert!(
        b["sentence"]
            .as_str()
            .unwrap()
            .contains("limited by its threads"),
        "{b}"
    );
    // The PID gave /proc's threads by state to every step.
    assert!(
        s0["steps"][0]["signals"]["threads"]["threads"]
            .as_f64()
            .unwrap()
            >= 10.0
    );
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
        text.contains("capacity ") && text.contains("binding resource: threads"),
        "{text}"
    );
    let html = std::fs::read_to_string(out_dir.path().join("report.html")).unwrap();
    assert!(
        html.contains("<svg") && html.contains("pool(threads="),
        "no chart"
    );
    // The same request held to a baseline ten times higher: the gate fails
    // (exit 1) and what the short search measured is still written.
    let mut base = doc.clone();
    base["searches"][0]["capacity_rps"] = serde_json::json!(cap * 10.0);
    let base_file = out_dir.path().join("base.json");
    std::fs::write(&base_file, base.to_string()).unwrap();
    let again = tempfile::tempdir().unwrap();
    let out = iolab()
        .args([
            "capacity",
            &format!("{}/work?steps=sleep:50", s.url),
            "--slo",
            "p99<150ms,success>=99%",
            "--start",
            "50",
            "--max-steps",
            "2",
            "--quiet",
            "--json",
            "--max-drop",
            "10%",
            "--baseline",
        ])
        .arg(&base_file)
        .arg("--out")
        .arg(again.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let gated: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let gate = &gated["gate"];
    assert_eq!(gate["passed"], false, "{gate}");
    let check = &gate["checks"][0];
    let (b, c) = (
        check["baseline_rps"].as_f64().unwrap(),
        check["capacity_rps"].as_f64().unwrap(),
    );
    assert!(
        (check["drop_pct"].as_f64().unwrap() - (b - c) / b * 100.0).abs() < 1e-6,
        "{gate}"
    );
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(again.path().join("capacity.json")).unwrap())
            .unwrap();
    assert_eq!(saved["gate"], *gate);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("gate FAILED against"), "{err}");
}

/// A baseline that cannot be one is refused before anything is measured.
#[test]
fn a_bad_baseline_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let search = serde_json::json!({
        "name": "url", "target": "http://127.0.0.1:9/work?steps=sleep:50", "step_rule": "",
        "steps": [], "capacity_rps": 100.0, "failed_rps": 110.0, "bracket_width_pct": 10.0,
        "outcome": "converged", "elapsed_s": 1.0
    });
    let doc = |slo: &str, target: &str| {
        let mut s = search.clone();
        s["target"] = serde_json::json!(target);
        serde_json::json!({
            "schema": "iolab.capacity/1", "name": "capacity", "capacity_rps": 100.0,
            "slo": slo.parse::<iolab_model::capacity::Slo>().unwrap(),
            "searches": [s], "started_utc": "2026-11-24T00:00:00Z"
        })
        .to_string()
    };
    let url = "http://127.0.0.1:1/work?steps=sleep:50";
    let slo = "p99<200ms,success>=99.9%";
    for (name, text, needle) in [
        (
            "text",
            "not json".to_string(),
            "is not an iolab.capacity/1 document",
        ),
        (
            "attack",
            r#"{"schema":"iolab.attack/1"}"#.to_string(),
            "is not an iolab.capacity/1 document",
        ),
        (
            "slo",
            doc("p99<500ms", url),
            "under the objective p99<500ms",
        ),
        (
            "request",
            doc(slo, "http://127.0.0.1:1/other"),
            "measured another request",
        ),
    ] {
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, text).unwrap();
        let out = iolab()
            .args(["capacity", url, "--slo", slo, "--baseline"])
            .arg(&path)
            .arg("--out")
            .arg(dir.path().join(format!("out-{name}")))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(needle), "{name}: {err}");
        assert!(
            !dir.path().join(format!("out-{name}")).exists(),
            "{name}: measured"
        );
    }
    // The same request on another port is the same request: accepted (the
    // search then finds nothing listening, which is data, not bad input).
    let path = dir.path().join("ok.json");
    std::fs::write(&path, doc(slo, "http://127.0.0.1:9/work?steps=sleep:50")).unwrap();
    let out = iolab()
        .args([
            "capacity",
            url,
            "--slo",
            slo,
            "--max-steps",
            "2",
            "--min-step",
            "100ms",
            "--quiet",
            "--baseline",
        ])
        .arg(&path)
        .arg("--out")
        .arg(dir.path().join("out-ok"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("out-ok/capacity.json").is_file());
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

/// A capacity preset's runtime targets are built before the first starts:
/// `iolab whatif whatif-node-loop-blocking` on a checkout without
/// `node_modules` said only "exited before printing its URL" (the runtime's
/// `build` was run by `iolab run` and `iolab serve`, not by capacity
/// presets). Here the build is refused (no installs while the tests run),
/// which shows it was tried, and says so.
#[test]
fn r31_06_a_capacity_preset_builds_its_runtimes_before_it_starts_them() {
    let repo = common::root();
    let root = tempfile::tempdir().unwrap();
    let runtimes = root.path().join("runtimes");
    std::fs::create_dir_all(runtimes.join("lib")).unwrap();
    std::fs::copy(repo.join("runtimes/README.md"), runtimes.join("README.md")).unwrap();
    std::fs::copy(
        repo.join("runtimes/lib/install.sh"),
        runtimes.join("lib/install.sh"),
    )
    .unwrap();
    // The node folder as a fresh checkout has it: no node_modules.
    copy_tree(&repo.join("runtimes/node"), &runtimes.join("node"));
    let preset = root.path().join("node.toml");
    std::fs::write(
        &preset,
        "name = \"node\"\ndescription = \"d\"\n[capacity]\nslo = \"p99<100ms\"\n[load]\nsteps = \"sleep:10\"\nrate = 10\nduration = \"1s\"\n[[targets]]\nmodel = \"loop-blocking\"\nruntime = \"node\"\n",
    )
    .unwrap();
    let out = iolab()
        .env("IOLAB_ROOT", root.path())
        .env("IOLAB_NO_INSTALL", "1")
        .args(["capacity", "--quiet", "--out"])
        .arg(root.path().join("out"))
        .arg(&preset)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("building runtime node failed"), "{err}");
    assert!(!err.contains("exited before printing its URL"), "{err}");
}

/// `from` copied to `to`, without `node_modules` (what a build makes).
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_name() == "node_modules" {
            continue;
        } else if src.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}
