//! Exit codes and messages of issue 30 (findings 13 and 18) against the real
//! binary: a run whose targets all failed exits 1, bad input exits 2 in one
//! line naming the flag at fault, and a run whose results cannot be saved
//! still prints what it measured. Tests named `r30_NN_*` reproduce finding NN.

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 2 with one line on stderr holding `names`, nothing on stdout.
fn refused(cmd: &mut Command, names: &str) -> String {
    let out = cmd.output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(names), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    err
}

/// A one-target preset in `dir` whose target runs `command` (TOML array text).
fn preset(dir: &Path, command: &str) -> String {
    let p = dir.join("p.toml");
    let text = format!(
        "name = \"p\"\ndescription = \"d\"\nwarmup = \"100ms\"\n[load]\nsteps = \"sleep:10\"\nrate = 20\nduration = \"1s\"\ntimeout = \"1s\"\n[[targets]]\nmodel = \"pool\"\ncommand = {command}\n"
    );
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// An attack of 1 s at 10 req/s on `url`, as a JSON document.
fn attack_json(url: &str) -> serde_json::Value {
    let out = iolab()
        .args(["attack", url, "--rate", "10", "-d", "1s", "--json"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)))
}

#[test]
fn r30_18_run_quiet_exits_1_when_every_target_failed_to_start() {
    let tmp = tempfile::tempdir().unwrap();
    let p = preset(tmp.path(), r#"["sh", "-c", "echo dying >&2; exit 3"]"#);
    let out = tmp.path().join("res");
    let o = iolab()
        .args(["run", &p, "-q", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // -q still prints the folder, which holds the failed run.
    assert!(String::from_utf8_lossy(&o.stdout).contains("res"));
    let runs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("runs.json")).unwrap()).unwrap();
    assert_eq!(runs["runs"][0]["outcome"]["status"], "start-failed");
}

#[test]
fn r30_18_a_target_never_healthy_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    // Told its port, it never listens: not healthy within the start timeout.
    let p = preset(tmp.path(), r#"["sh", "-c", "sleep 60 # {port}"]"#);
    let out = tmp.path().join("res");
    let o = iolab()
        .args(["run", &p, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("1 of 1 runs did not complete"), "{err}");
    assert!(err.contains("no run was measured"), "{err}");
}

#[test]
fn r30_18_run_out_an_existing_file_is_exit_2_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("taken");
    std::fs::write(&file, "mine").unwrap();
    let p = preset(tmp.path(), r#"["sh", "-c", "exit 3"]"#);
    let err = refused(
        iolab().args(["run", &p, "--out"]).arg(&file),
        "is not a folder",
    );
    assert_eq!(err.matches("is not a folder").count(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

#[test]
fn r30_18_insecure_against_plain_http_names_the_scheme_not_insecure() {
    let server = common::serve(&["--model", "pool"]);
    let https = server.url.replace("http://", "https://");
    let o = iolab()
        .args([
            "attack",
            &format!("{https}/health"),
            "-k",
            "--rate",
            "5",
            "-d",
            "1s",
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(!err.contains("--insecure"), "{err}");
    assert!(
        err.contains("does not speak TLS") && err.contains("http://"),
        "{err}"
    );
}

#[test]
fn r30_18_capacity_slo_past_the_timeout_limit_names_slo() {
    let err = refused(
        iolab().args(["capacity", "http://127.0.0.1:9/", "--slo", "p99<2h"]),
        "--slo",
    );
    assert!(!err.contains("--timeout:"), "{err}");
}

#[test]
fn r30_18_merge_a_missing_path_is_exit_2() {
    let server = common::serve(&["--model", "pool"]);
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.json");
    let o = iolab()
        .args([
            "attack",
            &format!("{}/health", server.url),
            "--rate",
            "10",
            "-d",
            "1s",
        ])
        .args(["--shard", "1/2", "--start-at", "+1s", "-o"])
        .arg(&a)
        .output()
        .unwrap();
    common::assert_ok(&o);
    refused(
        iolab().arg("merge").arg(&a).arg("/nonexistent/b.json"),
        "/nonexistent/b.json",
    );
}

#[test]
fn r30_18_report_refuses_more_ok_than_sent_as_merge_does() {
    let server = common::serve(&["--model", "pool"]);
    let mut doc = attack_json(&format!("{}/health", server.url));
    let sent = doc["requests"]["sent"].as_u64().unwrap();
    doc["requests"]["ok"] = (sent + sent / 4).into();
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("edited.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    refused(iolab().arg("report").arg(&f), "does not balance");
}

#[test]
fn r30_18_nothing_answered_prints_no_latency() {
    // Port 9 (discard) is closed on loopback: every request is refused.
    let o = iolab()
        .args([
            "attack",
            "http://127.0.0.1:9/",
            "--rate",
            "10",
            "-d",
            "500ms",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let line = |label: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label} line: {text}"))
            .to_string()
    };
    assert!(line("Answers").contains("0, 0,"), "{text}");
    for label in ["Latencies", "Service time"] {
        let l = line(label);
        assert!(!l.contains("0s") && l.contains('-'), "{l}");
    }
}

#[test]
fn r30_18_predict_refuses_what_attack_refuses() {
    refused(
        iolab().args([
            "predict",
            "--steps",
            "sleep:10",
            "--rate",
            "1e-9",
            "--duration",
            "10s",
        ]),
        "plans no request",
    );
    refused(
        iolab().args([
            "predict",
            "--steps",
            "sleep:10",
            "--concurrency",
            "10",
            "--max-client-connections",
            "1",
        ]),
        "--max-client-connections is 1",
    );
}

#[test]
fn r30_18_k8s_refuses_a_past_start_and_local_files() {
    let k8s = |start: &str, extra: &[&str]| {
        let mut cmd = iolab();
        cmd.args([
            "k8s",
            "--shards",
            "2",
            "--image",
            "img",
            "--start-at",
            start,
        ])
        .args(["--", "http://svc:8080/", "--rate", "10", "-d", "1s"])
        .args(extra);
        cmd
    };
    refused(&mut k8s("1", &[]), "in the past");
    let tmp = tempfile::tempdir().unwrap();
    let body = tmp.path().join("body.json");
    std::fs::write(&body, "{}").unwrap();
    let b = body.display().to_string();
    refused(
        &mut k8s("+5m", &["-m", "POST", "--body-file", &b]),
        "--body-file",
    );
    refused(&mut k8s("+5m", &["--targets", &b]), "--targets");
}

#[test]
fn r30_18_batch_max_time_zero_is_exit_2() {
    refused(
        iolab().args([
            "batch",
            "--tasks",
            "calls",
            "--calls",
            "10",
            "--max-time",
            "0s",
        ]),
        "--max-time",
    );
}

/// Fill the filesystem holding `dir` with one file, until a write fails.
fn fill(dir: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let block = vec![7u8; 4096];
    while f.write_all(&block).and_then(|_| f.sync_data()).is_ok() {}
}

/// Finding 13: on a full filesystem the table is printed before any file,
/// one line says why nothing was saved (exit 1), and no runs.json is left
/// that could be taken for the results. The disk fills once the run has
/// claimed its folder and written its first runs.json.
#[test]
fn r30_13_a_full_disk_prints_the_table_and_leaves_no_runs_json() {
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&mnt)
        .output();
    if !mounted.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!(
            "skipped: cannot mount a small tmpfs here (needs root): {}",
            mounted.map_or_else(|e| e.to_string(), |o| stderr(&o))
        );
        return;
    }
    let p = preset(
        tmp.path(),
        &format!(
            r#"["{}", "serve", "--model", "pool", "--port", "{{port}}"]"#,
            env!("CARGO_BIN_EXE_iolab")
        ),
    );
    let out = mnt.join("res");
    let child = iolab()
        .args(["run", &p, "--no-verify", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A hang guard, not a speed target: the first save comes before the target starts.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !out.join("runs.json").exists() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    fill(&mnt);
    let o = child.wait_with_output();
    let left = out.join("runs.json").exists();
    let _ = Command::new("umount").arg(&mnt).status();
    let o = o.unwrap();
    let (text, err) = (String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!left, "a runs.json with fewer runs was left behind: {err}");
    assert!(text.contains("pool"), "no table on stdout: {text}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("could not be saved") && lines[0].contains("No space left"),
        "{err}"
    );
    assert_eq!(lines[0].matches("No space left").count(), 1, "{err}");
}
