//! Sharded load end to end through the binary, on this machine: `iolab
//! attack --shard i/n --start-at`, `iolab merge` (and what it refuses, in one
//! line with exit 2), `iolab run --shard` folders merged run by run, and the
//! `iolab k8s` manifest validated offline against the Kubernetes schemas
//! (`scripts/k8s-validate`), together with a broken one that must fail.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{SystemTime, UNIX_EPOCH};

use common::{assert_ok, json_ok};

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A start `secs` from now, as Unix seconds with milliseconds.
fn start_in(secs: f64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    format!("{:.3}", now + secs)
}

/// One line on stderr, exit 2, naming `why`.
fn refused(out: &Output, why: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(why) && err.trim_end().lines().count() == 1,
        "{why}: {err}"
    );
}

#[test]
fn attack_shards_merge_and_what_a_merge_refuses() {
    let target = common::serve(&["--model", "loop-async"]);
    let base = target.url.clone();
    let url = format!("{base}/work?steps=sleep:5");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Concurrent, as on n hosts: each waits for the common start.
    let at = start_in(2.0);
    let children: Vec<_> = (1..=3)
        .map(|i| {
            iolab()
                .args([
                    "attack",
                    &url,
                    "--rate",
                    "200",
                    "--duration",
                    "1s",
                    "--quiet",
                ])
                .args(["--shard", &format!("{i}/3"), "--start-at", &at])
                .arg("--out")
                .arg(dir.join(format!("run-{i}.json")))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    drop(target);
    let s = |i: u32| dir.join(format!("run-{i}.json"));
    let merged = json_ok(
        &iolab()
            .arg("merge")
            .args([s(1), s(2), s(3)])
            .arg("--json")
            .output()
            .unwrap(),
    );
    assert_eq!(merged["requests"]["planned"], 200);
    assert_eq!(merged["requests"]["ok"], 200, "{}", merged["errors"]);
    assert_eq!(merged["merged"]["shards"], 3);
    // A folder is read like its files; the merged document renders like any attack.
    let out = iolab()
        .arg("merge")
        .arg(dir)
        .arg("-o")
        .arg(dir.join("m.json"))
        .output()
        .unwrap();
    assert_ok(&out);
    let text = iolab()
        .arg("report")
        .arg(dir.join("m.json"))
        .output()
        .unwrap();
    assert_ok(&text);
    assert!(String::from_utf8_lossy(&text.stdout)
        .contains("Shards        [merged, plan, start skew]       3,"));
    // Refusals: one line, exit 2.
    refused(
        &iolab().arg("merge").args([s(1), s(2)]).output().unwrap(),
        "shard(s) 3 of 3 missing",
    );
    refused(
        &iolab()
            .arg("merge")
            .args([s(1), s(1), s(2), s(3)])
            .output()
            .unwrap(),
        "appears twice",
    );
    refused(
        &iolab()
            .arg("merge")
            .args([s(1), dir.join("m.json")])
            .output()
            .unwrap(),
        "is not a shard",
    );
    refused(
        &iolab()
            .arg("merge")
            .arg(dir.join("none.json"))
            .output()
            .unwrap(),
        "cannot read",
    );
    let other = dir.join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::copy(s(1), other.join("a.json")).unwrap();
    let t = std::time::Instant::now();
    refused(
        &iolab()
            .args(["merge", "--wait", "1s"])
            .arg(&other)
            .output()
            .unwrap(),
        "shard(s) 2, 3 of 3 missing",
    );
    assert!(t.elapsed().as_secs_f64() >= 1.0);
    // A start already past is refused, saying by how much.
    let late = iolab()
        .args([
            "attack",
            &url,
            "--rate",
            "10",
            "--duration",
            "1s",
            "--shard",
            "1/2",
            "--start-at",
            &start_in(-5.0),
        ])
        .output()
        .unwrap();
    refused(&late, "in the past: this shard 1/2 started late");
}

#[test]
fn run_folders_of_a_sharded_preset_merge_run_by_run() {
    let tmp = tempfile::tempdir().unwrap();
    let preset = tmp.path().join("sharded.toml");
    std::fs::write(
        &preset,
        r#"
name = "sharded"
description = "two rates of a short sleep, twice each, for a sharded run"
reps = 2
warmup = "200ms"

[load]
steps = "sleep:10"
driver = "open"
rate = [100, 150]
duration = "1s"
timeout = "500ms"
interval = "250ms"

[[targets]]
model = "loop-async"
"#,
    )
    .unwrap();
    let at = start_in(4.0);
    let hosts: Vec<_> = (1..=2)
        .map(|i| {
            iolab()
                .arg("run")
                .arg(&preset)
                .args(["--no-pin", "--no-verify", "--quiet", "--shard-gap", "2s"])
                .args(["--shard", &format!("{i}/2"), "--start-at", &at])
                .arg("--out")
                .arg(tmp.path().join(format!("host-{i}")))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut h in hosts {
        assert!(h.wait().unwrap().success());
    }
    let out = tmp.path().join("merged");
    let merge = iolab()
        .arg("merge")
        .args([tmp.path().join("host-1"), tmp.path().join("host-2")])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_ok(&merge);
    let runs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("runs.json")).unwrap()).unwrap();
    let planned: Vec<u64> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["attack"]["requests"]["planned"].as_u64().unwrap())
        .collect();
    assert_eq!(planned, vec![100, 150]);
    for r in runs["runs"].as_array().unwrap() {
        assert_eq!(r["reps"].as_array().unwrap().len(), 2);
        assert_eq!(r["attack"]["merged"]["shards"], 2);
        assert_eq!(
            r["attack"]["requests"]["ok"], r["attack"]["requests"]["planned"],
            "{}",
            r["attack"]["errors"]
        );
    }
    assert!(out.join("report.html").is_file());
    // Without --start-at, hosts could not run each run together.
    let alone = iolab()
        .arg("run")
        .arg(&preset)
        .args(["--shard", "1/2", "--dry-run"])
        .output()
        .unwrap();
    refused(&alone, "--shard needs --start-at");
}

#[test]
fn the_kubernetes_manifest_validates_offline_and_a_broken_one_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("job.yaml");
    let out = iolab()
        .args([
            "k8s",
            "--shards",
            "4",
            "--image",
            "registry.example/iolab:1",
            "--cpu",
            "1",
            "-o",
        ])
        .arg(&job)
        .args([
            "--",
            "http://target.default.svc:8080/work?steps=sleep:100",
            "--rate",
            "2000",
            "--duration",
            "60s",
        ])
        .output()
        .unwrap();
    assert_ok(&out);
    let text = std::fs::read_to_string(&job).unwrap();
    for needed in [
        "completionMode: \"Indexed\"",
        "backoffLimitPerIndex: 0",
        "JOB_COMPLETION_INDEX",
        "\"merge\"",
    ] {
        assert!(text.contains(needed), "{needed} missing:\n{text}");
    }
    let validate = |file: &Path| {
        Command::new(repo().join("scripts/k8s-validate"))
            .arg(file)
            .output()
            .expect("scripts/k8s-validate runs")
    };
    let good = validate(&job);
    assert!(
        good.status.success(),
        "{}{}",
        String::from_utf8_lossy(&good.stdout),
        String::from_utf8_lossy(&good.stderr)
    );
    // The check can fail: a misspelled field is refused, naming it.
    let broken = tmp.path().join("broken.yaml");
    std::fs::write(
        &broken,
        text.replace("backoffLimitPerIndex", "backoffLimitPerIndx"),
    )
    .unwrap();
    let bad = validate(&broken);
    let said =
        String::from_utf8_lossy(&bad.stdout).to_string() + &String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(1), "{said}");
    assert!(said.contains("backoffLimitPerIndx"), "{said}");
    // Flags each pod gets are the manifest's business, and plans are checked first.
    let dup = iolab()
        .args([
            "k8s",
            "--shards",
            "2",
            "--image",
            "x",
            "--",
            "http://t/",
            "--rate",
            "9",
            "-d",
            "1s",
            "--out",
            "f",
        ])
        .output()
        .unwrap();
    refused(&dup, "--out after --: iolab k8s sets it for each pod");
}
