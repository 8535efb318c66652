//! `iolab attack` end to end: the real binary against a real server on
//! 127.0.0.1 (a tiny keep-alive HTTP server on std threads).

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;

use serde_json::Value;

/// A keep-alive server answering every request with 200 "ok"; returns its URL.
fn server() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    while let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..i + 4);
                        if s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                            .is_err()
                        {
                            return;
                        }
                    }
                    match s.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
            });
        }
    });
    format!("http://{addr}/")
}

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

#[test]
fn json_output_is_one_attack_document_with_honest_books() {
    let url = server();
    let out = iolab()
        .args([
            "attack",
            &url,
            "--rate",
            "100",
            "--duration",
            "500ms",
            "--threads",
            "1",
            "--json",
        ])
        .output()
        .unwrap();
    let v = common::json_ok(&out);
    assert_eq!(v["schema"], "iolab.attack/1");
    assert_eq!(v["target"], url.as_str());
    assert_eq!(v["driver"]["kind"], "open");
    assert_eq!(v["driver"]["timeout_s"], 10.0);
    let r = &v["requests"];
    assert_eq!(r["planned"], 50);
    assert_eq!(
        r["sent"].as_u64().unwrap() + r["not_sent"].as_u64().unwrap(),
        50
    );
    let errors: u64 = v["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(
        r["sent"].as_u64().unwrap(),
        r["ok"].as_u64().unwrap() + r["non_2xx"].as_u64().unwrap() + errors
    );
    assert_eq!(r["ok"], 50);
    assert_eq!(v["status_codes"]["200"], 50);
    for key in [
        "latency_ms",
        "service_ms",
        "throughput_rps",
        "series",
        "generator",
        "spectrum",
        "histogram",
    ] {
        assert!(!v[key].is_null(), "missing {key}");
    }
    for key in ["min", "mean", "p50", "p90", "p95", "p99", "p999", "max"] {
        assert!(v["latency_ms"][key].is_number(), "latency_ms.{key}");
    }
}

#[test]
fn closed_loop_text_summary_and_files() {
    let url = server();
    let dir = tempfile::tempdir().unwrap();
    let (hdr, csv) = (dir.path().join("run.hlog"), dir.path().join("run.csv"));
    let out = iolab()
        .args(["attack", &url, "-c", "3", "-n", "30", "--quiet"])
        .arg("--hdr")
        .arg(&hdr)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    common::assert_ok(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Requests      [planned, sent, not_sent]        30, 30, 0"),
        "{text}"
    );
    assert!(
        text.contains("Latencies") && text.contains("Status Codes") && text.contains("200:30"),
        "{text}"
    );
    assert!(
        !text.contains('\r'),
        "no progress line when stdout is not a TTY"
    );
    let log = std::fs::read_to_string(&hdr).unwrap();
    assert!(
        log.contains("#[StartTime:")
            && log
                .lines()
                .any(|l| l.starts_with("Tag=") || l.starts_with("0.")),
        "{log}"
    );
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(rows.lines().count(), 31);
    assert!(rows.lines().skip(1).all(|l| l.ends_with(",200,")), "{rows}");
}

#[test]
fn a_closed_port_is_data_not_a_failure() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = iolab()
        .args([
            "attack",
            &format!("http://127.0.0.1:{port}/"),
            "-r",
            "20",
            "-d",
            "250ms",
            "--json",
            "--threads",
            "1",
        ])
        .output()
        .unwrap();
    let v = common::json_ok(&out);
    assert_eq!(v["errors"]["refused"], 5);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let url = server();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["ftp://127.0.0.1/", "-r", "1", "-d", "1s"], "http://"),
        (
            vec![
                "https://127.0.0.1:1/",
                "-r",
                "1",
                "-d",
                "1s",
                "--engine",
                "io_uring",
            ],
            "TLS",
        ),
        (vec![&url, "--rate", "0", "-d", "1s"], "above 0"),
        (vec![&url, "--rate=-5", "-d", "1s"], "above 0"),
        (
            vec![&url, "--rate", "10", "--duration", "3x"],
            "unknown unit",
        ),
        (vec![&url, "--rate", "10"], "--duration"),
        (
            vec![&url, "--phase", "10s:5", "--phase", "1s:5@5s"],
            "overlap",
        ),
        (vec![&url, "--phase", "10s"], "--phase"),
        (vec![&url], "--rate"),
        (vec![&url, "-c", "2", "-r", "5", "-d", "1s"], "pick one"),
        (vec![&url, "-c", "2"], "--requests"),
        (
            vec![&url, "-r", "5", "-d", "1s", "--timeout", "0s"],
            "--timeout",
        ),
        (vec![&url, "-r", "5", "-d", "1s", "--cpus", "x"], "--cpus"),
        (
            vec![&url, "-r", "5", "-d", "1s", "--source-addrs", "10.0.0.5"],
            "cannot reach the loopback target",
        ),
        (
            vec![&url, "-r", "5", "-d", "1s", "--source-addrs", "127.0.0.x"],
            "--source-addrs",
        ),
    ];
    for (args, needle) in cases {
        let out = iolab().arg("attack").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn ctrl_c_stops_the_attack_and_still_prints_an_honest_partial_result() {
    let url = server();
    let child = iolab()
        .args([
            "attack",
            &url,
            "--rate",
            "200",
            "--duration",
            "60s",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    common::signal(child.id(), "INT");
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("a partial JSON result");
    assert_eq!(v["interrupted"], true);
    let r = &v["requests"];
    let n = |k: &str| r[k].as_u64().unwrap();
    // Stopped after ~1.5 s of 60: far fewer sent than planned, and the books balance.
    assert!(n("sent") > 50 && n("sent") < 2_000, "{r}");
    assert_eq!(n("planned"), n("sent") + n("not_sent"), "{r}");
    assert_eq!(n("sent"), n("ok") + n("non_2xx"), "{r}");
    // The whole schedule stays planned (issue 30, finding 17).
    assert_eq!(n("planned"), 12_000, "{r}");
}

/// `--slo`: the verdict is in the JSON; a met objective exits 0, a failed
/// one exits 1 with the result still printed and written.
#[test]
fn attack_slo_gate_exits_1_when_the_objective_fails() {
    let url = server();
    let dir = tempfile::tempdir().unwrap();
    let run = |slo: &str, out: &str| {
        iolab()
            .args([
                "attack",
                &url,
                "--rate",
                "200",
                "-d",
                "500ms",
                "--threads",
                "1",
                "--json",
                "--slo",
                slo,
                "-o",
            ])
            .arg(dir.path().join(out))
            .output()
            .unwrap()
    };
    let met = run("p99<2s,success>=99.9%", "met.json");
    let doc: Value = serde_json::from_slice(&met.stdout).unwrap();
    assert_eq!(met.status.code(), Some(0), "{doc}");
    assert_eq!(doc["slo"]["met"], true, "{doc}");
    assert_eq!(doc["slo"]["verdict"], "meets p99<2000ms,success>=99.9%");
    // Nothing a loopback server answers takes under a microsecond at p99.
    let failed = run("p99<1us", "failed.json");
    assert_eq!(failed.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&failed.stdout).unwrap();
    assert_eq!(doc["slo"]["met"], false, "{doc}");
    assert!(
        doc["slo"]["verdict"]
            .as_str()
            .unwrap()
            .contains("answered within 0.001ms"),
        "{doc}"
    );
    let saved: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("failed.json")).unwrap()).unwrap();
    assert_eq!(saved["slo"], doc["slo"]);
    let err = String::from_utf8_lossy(&failed.stderr);
    assert!(err.contains("objective p99<0.001ms failed"), "{err}");
    // A bad objective is bad input: one line, exit 2, nothing sent.
    let bad = run("p99<soon", "bad.json");
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr).trim().lines().count(),
        1
    );
    assert!(!dir.path().join("bad.json").exists());
}
