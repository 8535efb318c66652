//! `iolab run` end to end: real target processes, real load on loopback,
//! results folders checked for accounting, failures recorded, bad presets
//! refused, and Ctrl-C leaving no stray process behind.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::prelude::*;
use predicates::prelude::*;
use serde_json::Value;

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

fn preset(name: &str) -> String {
    format!(
        "{}/../../presets/test/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn runs_json(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("runs.json")).expect("runs.json written");
    serde_json::from_str(&text).expect("runs.json is JSON")
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// sent = ok + non_2xx + every error class; planned = sent + not_sent.
fn check_accounting(a: &Value) {
    let r = &a["requests"];
    let errors: u64 = a["errors"].as_object().unwrap().values().map(u).sum();
    assert_eq!(u(&r["planned"]), u(&r["sent"]) + u(&r["not_sent"]), "{r}");
    assert_eq!(
        u(&r["sent"]),
        u(&r["ok"]) + u(&r["non_2xx"]) + errors,
        "{a}"
    );
}

#[test]
fn a_tiny_preset_runs_end_to_end() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    iolab()
        .args(["run", &preset("tiny"), "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("res"));
    let j = runs_json(&out);
    assert_eq!(j["schema"], "iolab.runs/1");
    assert_eq!(j["complete"], true);
    assert!(j["finished_utc"].is_string());
    assert!(out.join("environment.json").is_file());
    assert!(j["environment"]["cores"].as_u64().unwrap() >= 1);
    let runs = j["runs"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "pool-rate=20",
            "pool-rate=80",
            "loop-async-rate=20",
            "loop-async-rate=80"
        ]
    );
    for r in runs {
        assert_eq!(r["outcome"]["status"], "completed", "{}", r["outcome"]);
        let a = &r["attack"];
        check_accounting(a);
        let rate = r["coordinates"]["rate"].as_f64().unwrap();
        // 1 s at `rate`: the schedule plans rate requests (give or take one).
        let planned = u(&a["requests"]["planned"]) as f64;
        assert!(
            (planned - rate).abs() <= 2.0,
            "planned {planned} at rate {rate}"
        );
        // Both models serve this load easily (capacity >= 100/s): generous margin.
        assert!(u(&a["requests"]["ok"]) as f64 >= planned * 0.5, "{a}");
        let series = r["telemetry"]["series"].as_array().unwrap();
        assert!(
            series.len() >= 3,
            "telemetry every 100 ms: {}",
            series.len()
        );
        assert!(series.iter().all(|p| p["threads"].as_u64().unwrap() >= 1));
        assert!(
            series.iter().any(|p| p["completed"].is_number()),
            "scraped /metrics"
        );
        assert!(r["verify"]["checks"]
            .as_array()
            .is_some_and(|c| !c.is_empty()));
        assert_eq!(r["spec"]["scale"], 1.0);
    }
}

#[test]
fn a_crashing_target_is_recorded_and_the_experiment_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    iolab()
        .args(["run", &preset("crash"), "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    let j = runs_json(&out);
    assert_eq!(j["complete"], true);
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["name"], "crasher");
    assert_eq!(runs[0]["outcome"]["status"], "start-failed");
    let detail = runs[0]["outcome"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("exit status 3") && detail.contains("dying"),
        "{detail}"
    );
    assert!(runs[0].get("attack").is_none());
    assert_eq!(runs[1]["outcome"]["status"], "completed");
    check_accounting(&runs[1]["attack"]);
}

#[test]
fn bad_presets_exit_2_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.toml");
    let text = std::fs::read_to_string(preset("tiny"))
        .unwrap()
        .replace("threads = 2", "thread = 2");
    std::fs::write(&bad, text).unwrap();
    let out = tmp.path().join("never");
    iolab()
        .args(["run", bad.to_str().unwrap(), "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.toml:"))
        .stderr(predicate::str::contains("field 'targets[0].thread'"))
        .stderr(predicate::function(|s: &str| s.trim().lines().count() == 1));
    assert!(!out.exists(), "nothing started, nothing written");

    std::fs::write(&bad, "name = \"x\"\ndescription = \"d\"\n[load]\nsteps = \"sleep:1\"\nrate = 0\nduration = \"1s\"\n[[targets]]\nmodel = \"pool\"\n").unwrap();
    iolab()
        .args(["run", bad.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(":5: field 'load.rate'"));

    iolab()
        .args(["run", "no-such-preset"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("iolab presets"));
    iolab()
        .args(["run", &preset("tiny"), "--scale", "2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--scale"));
}

/// Issue 50 finding 8: `iolab presets` listed each whatif pair at "~14s"
/// (its load's time) where its searches took minutes. A searched preset
/// has no estimate: "search", and the command that runs it.
#[test]
fn r50_8_a_searched_preset_is_listed_without_a_time() {
    let out = iolab()
        .args(["presets", "--dir", "/nonexistent"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let row = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name}: {text}"))
            .split_whitespace()
            .nth(2)
            .unwrap()
            .to_string()
    };
    assert_eq!(row("whatif-cpu"), "search");
    assert!(row("showdown").starts_with('~'), "{text}");
    assert!(text.contains("`iolab whatif NAME` for a pair"), "{text}");
}

#[test]
fn presets_lists_the_showdown_and_dry_run_expands_it() {
    iolab()
        .args(["presets", "--dir", "/nonexistent"])
        .assert()
        .success()
        .stdout(predicate::str::contains("showdown"));
    let dir = format!("{}/../../presets/test", env!("CARGO_MANIFEST_DIR"));
    iolab()
        .args(["presets", "--dir", &dir])
        .assert()
        .success()
        .stdout(predicate::str::contains("tiny").and(predicate::str::contains("crash")));
    iolab()
        .args(["run", "--dry-run"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("pool-rate=200").and(predicate::str::contains("loop-async")),
        );
}

#[test]
fn dry_run_speaks_the_labs_language_not_debug() {
    // Issue 35: `batch Mixed { cpu: 100, io: 100, cpu_terms: [3088365, ...] }`.
    for (preset, needle) in [
        ("e1-actors", "Leibniz terms"),
        ("e3-futures", "calls of"),
        ("showdown", "req/s"),
    ] {
        let out = iolab().args(["run", preset, "--dry-run"]).output().unwrap();
        assert!(out.status.success(), "{preset}");
        let text = String::from_utf8(out.stdout).unwrap();
        // The run lines (indented), not the preset's own description.
        let runs: String = text.lines().filter(|l| l.starts_with("  ")).collect();
        assert!(runs.contains(needle), "{preset}: {text}");
        for debug in ["{", "}", "[", "Some(", "Mixed", "Calls"] {
            assert!(!runs.contains(debug), "{preset}: '{debug}' in {text}");
        }
    }
}

/// Children of `pid` (from /proc/*/stat).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let ppid: u32 = rest.split_whitespace().nth(1).unwrap().parse().unwrap();
        if ppid == pid {
            out.push(p);
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map(|s| {
            !s.lines()
                .any(|l| l.starts_with("State:") && l.contains('Z'))
        })
        .unwrap_or(false)
}

#[test]
fn ctrl_c_stops_cleanly_and_keeps_what_was_measured() {
    let tmp = tempfile::tempdir().unwrap();
    let out: PathBuf = tmp.path().join("res");
    let mut child = iolab()
        .args(["run", &preset("slow"), "--quiet", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first target to be up, then a little into the run.
    let t0 = Instant::now();
    let mut targets = Vec::new();
    while targets.is_empty() && t0.elapsed() < Duration::from_secs(20) {
        targets = children(child.id());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!targets.is_empty(), "a target process was started");
    std::thread::sleep(Duration::from_millis(2500));
    targets.extend(children(child.id()));
    common::signal(child.id(), "INT");
    let t1 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t1.elapsed() < Duration::from_secs(20),
            "iolab run did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
    std::thread::sleep(Duration::from_millis(200));
    for p in &targets {
        assert!(!alive(*p), "target {p} outlived iolab");
    }
    let j = runs_json(&out);
    assert_eq!(j["complete"], false);
    assert!(j["finished_utc"].is_string());
    let runs = j["runs"].as_array().unwrap();
    assert!(!runs.is_empty() && runs.len() < 3, "{} runs", runs.len());
    let last = runs.last().unwrap();
    assert_eq!(last["outcome"]["status"], "interrupted");
    if let Some(a) = last.get("attack") {
        check_accounting(a);
    }
}

#[test]
fn a_target_that_dies_mid_run_is_recorded_with_its_status() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("dies.toml");
    // The target is killed 1.5 s after it starts: during the measured 3 s.
    let text = format!(
        "name = \"dies\"\ndescription = \"d\"\nwarmup = \"100ms\"\n[load]\nsteps = \"sleep:10\"\nrate = 20\nduration = \"3s\"\ntimeout = \"500ms\"\n[[targets]]\nmodel = \"pool\"\ncommand = [\"timeout\", \"-s\", \"KILL\", \"1.5\", \"{}\", \"serve\", \"--model\", \"pool\", \"--port\", \"{{port}}\"]\n",
        env!("CARGO_BIN_EXE_iolab")
    );
    std::fs::write(&p, text).unwrap();
    let out = tmp.path().join("res");
    iolab()
        .args([
            "run",
            p.to_str().unwrap(),
            "--quiet",
            "--no-verify",
            "--out",
        ])
        .arg(&out)
        .assert()
        // Its only run died: the experiment measured nothing whole, so exit 1 (docs/run.md's
        // exit codes), and what the run saw before is still written.
        .code(1);
    let j = runs_json(&out);
    assert_eq!(j["complete"], true);
    let r = &j["runs"][0];
    assert_eq!(r["outcome"]["status"], "target-died", "{}", r["outcome"]);
    let detail = r["outcome"]["detail"].as_str().unwrap();
    // GNU timeout kills its whole group, itself included.
    assert!(
        detail.contains("killed by signal 9") || detail.contains("exit status 137"),
        "{detail}"
    );
    // What was measured before it died is kept, and adds up.
    let a = &r["attack"];
    check_accounting(a);
    assert!(u(&a["requests"]["ok"]) > 0, "{a}");
    assert!(
        u(&a["errors"]["refused"]) + u(&a["errors"]["reset"]) > 0,
        "{a}"
    );
}
