//! `iolab attack grpc://... --call` end to end against a real grpcio
//! server: the flags become a gRPC call, the JSON result counts calls by
//! status, and each bad call is one `error:` line, exit 2, before any load.
//! `iolab capacity` searches a gRPC service as it does a URL.

mod common;
#[path = "../../loadgen/tests/common/grpcio.rs"]
mod grpcio;

use std::process::{Command, Output};

use grpcio::Grpcio;

fn iolab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .output()
        .expect("run iolab")
}

/// A closed loop on one connection of 4 streams (4 calls in flight), 30 calls.
fn attack(url: &str, call: &[&str]) -> Output {
    let mut args = vec![
        "attack",
        url,
        "-c",
        "1",
        "-n",
        "30",
        "--connections",
        "1",
        "--streams",
        "4",
        "--threads",
        "1",
        "--json",
        "-q",
    ];
    args.extend_from_slice(call);
    iolab(&args)
}

#[test]
fn attack_grpc_counts_calls_by_status() {
    let Some(s) = Grpcio::start(&[]) else { return };
    let proto = grpcio::proto().display().to_string();
    let doc = common::json_ok(&attack(
        &s.url(),
        &[
            "--call",
            "iolab.test.Greeter/SayHello",
            "--data",
            r#"{"name":"x"}"#,
            "-H",
            "x-tenant: a",
        ],
    ));
    assert_eq!(doc["requests"]["ok"], 30, "{doc}");
    assert_eq!(
        doc["protocol"]["grpc_method"],
        "iolab.test.Greeter/SayHello"
    );
    assert_eq!(
        (
            doc["protocol"]["streams"].as_u64(),
            doc["protocol"]["connections_opened"].as_u64()
        ),
        (Some(4), Some(1))
    );
    let doc = common::json_ok(&attack(
        &s.url(),
        &[
            "--call",
            "iolab.test.Greeter/Fail",
            "--proto",
            &proto,
            "--data",
            r#"{"code":8}"#,
        ],
    ));
    assert_eq!(doc["requests"]["ok"], 0, "{doc}");
    assert_eq!(doc["errors"]["grpc_status"], 30, "{doc}");
    assert_eq!(
        doc["errors"]["by_code"]["grpc_status"]["RESOURCE_EXHAUSTED"],
        30
    );
    // The text summary names the status, with the count the JSON has.
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("fail.json");
    std::fs::write(&saved, doc.to_string()).unwrap();
    let out = iolab(&["report", saved.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("Error Codes"))
        .unwrap_or_else(|| panic!("no Error Codes line: {text}"));
    assert!(
        line.ends_with("grpc_status:RESOURCE_EXHAUSTED:30"),
        "{line}"
    );
}

#[test]
fn bad_grpc_calls_exit_2_in_one_line() {
    let Some(s) = Grpcio::start(&["--no-reflection"]) else {
        return;
    };
    let url = s.url();
    let proto = grpcio::proto().display().to_string();
    for (args, words) in [
        (
            vec!["--call", "iolab.test.Greeter/SayHello"],
            &["offers no reflection", "--proto"][..],
        ),
        (
            vec!["--call", "iolab.test.Greeter/Nope", "--proto", &proto],
            &["no method 'Nope'"][..],
        ),
        (
            vec![
                "--call",
                "iolab.test.Greeter/SayHello",
                "--proto",
                &proto,
                "--data",
                "{\"name\":1}",
            ],
            &["--data"][..],
        ),
        (
            vec![
                "--call",
                "iolab.test.Greeter/SayHello",
                "--proto",
                "/nonexistent/x.proto",
            ],
            &["--proto"][..],
        ),
        (
            vec!["--call", "iolab.test.Greeter/SayHello", "--body", "x"],
            &["--body"][..],
        ),
        (vec!["--data", "{}"], &["--call"][..]),
    ] {
        let out = attack(&url, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: printed a result");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        for w in words {
            assert!(err.contains(w), "{args:?}: {err}");
        }
    }
    // A grpc:// URL without --call: the fix names the flag.
    let out = iolab(&["attack", &url, "-c", "1", "-n", "1", "-q"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--call package.Service/Method") && err.trim_end().lines().count() == 1,
        "{err}"
    );
}

/// A `grpc://` URL with `--streams` but no `--call` is missing its method,
/// not HTTP/2 (`grpc://` is HTTP/2 already): the fix names `--call`. Needs
/// no server: the plan is refused before anything is sent.
#[test]
fn streams_without_call_on_a_grpc_url_names_call_not_http2() {
    let out = iolab(&[
        "attack",
        "grpc://127.0.0.1:1",
        "--streams",
        "4",
        "-c",
        "1",
        "-n",
        "1",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--call"), "{err}");
    assert!(!err.contains("--http2"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// `iolab capacity` takes a gRPC target as it takes a URL: grpcio with 4
/// worker threads, each call holding one for 50 ms, serves 4 / 0.05 s =
/// 80 calls/s; past that, calls queue for a worker and p99 grows.
#[test]
fn capacity_of_a_grpc_service_is_its_workers_over_the_call_time() {
    let Some(s) = Grpcio::start(&["--workers", "4"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = iolab(&[
        "capacity",
        &s.url(),
        "--call",
        "iolab.test.Greeter/SayHello",
        "--data",
        r#"{"name":"x","delay_ms":50}"#,
        "--slo",
        "p99<150ms,success>=99%",
        "--precision",
        "10%",
        "--start",
        "20",
        "--max-step",
        "2s",
        // One window decides: this test is about the gRPC path; windows are
        // held on the simulated bench and in capacity.rs.
        "--budget",
        "0%",
        "--pid",
        &s.pid().to_string(),
        "--json",
        "--quiet",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let doc = common::json_ok(&out);
    common::assert_capacity_schema(&doc);
    let cap = doc["capacity_rps"].as_f64().expect("a capacity");
    let steps = doc["searches"][0]["steps"].as_array().unwrap();
    eprintln!(
        "grpcio, 4 workers x 50 ms: capacity {cap} calls/s in {} steps, fit: {}",
        steps.len(),
        doc["searches"][0]["fit"]["binding"]["sentence"]
    );
    assert!(
        (cap - 80.0).abs() <= 0.3 * 80.0,
        "capacity {cap} calls/s vs 4 workers / 50 ms = 80"
    );
    assert!(steps.len() >= 3, "{} steps", steps.len());
    for st in steps {
        let a = &st["attack"];
        assert_eq!(
            a["protocol"]["grpc_method"], "iolab.test.Greeter/SayHello",
            "every step calls the method: {a}"
        );
        if st["passed"] == true {
            // A passing step's calls were answered OK: none failed by status.
            assert!(a["requests"]["ok"].as_u64().unwrap() > 0, "{a}");
            assert_eq!(a["errors"]["grpc_status"].as_u64().unwrap_or(0), 0, "{a}");
        }
    }
}
