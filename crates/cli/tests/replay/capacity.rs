//! `iolab capacity --replay FILE --base URL` end to end (issue 53): a
//! service with three endpoints of known cost behind one port, the
//! built-in pool of 4 threads: `GET /health` (trivial), `HEAD
//! /work?steps=sleep:50` (holds a pool thread 50 ms) and `GET
//! /work?steps=cpu:1000000` (a few ms of CPU on a pool thread). Its
//! capacity is the pool over the mix's mean service time, each endpoint's
//! cost measured unloaded; the endpoint that fails first is the one whose
//! bound leaves its requests the least queueing (every request waits in
//! the same queue), and every endpoint is seen to wait in that one queue.
//! Bad forms of the new flags exit 2 in one line.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use super::common::{self, serve};
use super::{iolab, stderr};

/// The three endpoints: request line target, method, share of the log.
const MIX: [(&str, &str, f64); 3] = [
    ("GET", "/health", 0.5),
    ("HEAD", "/work?steps=sleep:50", 0.3),
    ("GET", "/work?steps=cpu:1000000", 0.2),
];

/// One request's wall time, ms, on a new connection.
fn once(url: &str, method: &str, path: &str) -> f64 {
    let host = url.trim_start_matches("http://");
    let mut s = TcpStream::connect(host).unwrap();
    let t0 = Instant::now();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    assert!(out.starts_with(b"HTTP/1.1 200"), "{method} {path}");
    t0.elapsed().as_secs_f64() * 1000.0
}

/// The median of 11 single requests, ms: an endpoint's cost unloaded.
fn cost(url: &str, method: &str, path: &str) -> f64 {
    let mut v: Vec<f64> = (0..11).map(|_| once(url, method, path)).collect();
    v.sort_by(f64::total_cmp);
    v[5]
}

#[test]
fn the_capacity_of_a_three_endpoint_mix_is_its_pool_over_the_mean_cost() {
    let s = serve(&["--model", "pool", "--threads", "4"]);
    let dir = tempfile::tempdir().unwrap();
    let log = common::access_log(dir.path(), &MIX);
    let mean_ms: f64 = MIX.iter().map(|(m, p, w)| w * cost(&s.url, m, p)).sum();
    let truth = 4.0 / (mean_ms / 1000.0);
    let out = iolab()
        .args(["capacity", "--replay"])
        .arg(&log)
        .args(["--base", &s.url, "--slo"])
        .arg("HEAD /work:p99<150ms; *:p99<300ms")
        .args(["--precision", "10%", "--start", "100", "--budget", "0%"])
        .args([
            "--pid",
            &s.child.id().to_string(),
            "--json",
            "--quiet",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let doc = common::json_ok(&out);
    common::assert_capacity_schema(&doc);
    let cap = doc["capacity_rps"].as_f64().expect("a capacity");
    let s0 = &doc["searches"][0];
    assert!(
        (cap - truth).abs() / truth <= 0.15,
        "capacity {cap} vs {truth:.1} (4 threads / {mean_ms:.2} ms): {}",
        s0["outcome"]
    );
    // Every request waits in the one queue: HEAD /work's bound leaves
    // 100 ms of it, the others' about 290 ms.
    let first = &s0["fails_first"];
    assert_eq!(
        (first["method"].as_str(), first["template"].as_str()),
        (Some("HEAD"), Some("/work")),
        "{first}"
    );
    assert_eq!(first["rate_rps"], s0["failed_rps"]);
    // One pool's queue: every endpoint waited in it alike.
    let split = &s0["endpoint_split"];
    assert_eq!(split["shared"], true, "{split}");
    assert_eq!(split["endpoints"].as_array().map(Vec::len), Some(3));
    assert_eq!(doc["endpoint_slo"]["endpoints"][0]["template"], "/work");
    // Each step's attack carries the mix in its shares.
    let eps = s0["steps"][0]["attack"]["endpoints"].as_array().unwrap();
    assert_eq!(eps.len(), 3, "{eps:?}");
    let text = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    assert!(
        text.contains("HEAD /work fails first: p99 "),
        "the sentence in the report"
    );
    eprintln!(
        "three-endpoint mix: capacity {cap:.1}/s, truth {truth:.1}/s (4 threads / {mean_ms:.2} ms)"
    );
}

#[test]
fn bad_forms_of_capacitys_replay_exit_2_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = common::access_log(dir.path(), &MIX);
    let log = log.to_str().unwrap();
    let base = ["--base", "http://127.0.0.1:9"];
    let cases: [(Vec<&str>, &str); 7] = [
        (
            vec!["presets/capacity.toml", "--replay", log, base[0], base[1]],
            "--replay cannot take a URL or preset",
        ),
        (
            vec!["http://127.0.0.1:9/", "--slo", "GET /a:p99<1s"],
            "--slo per endpoint (METHOD /template:CLAUSES; ...) judges a replayed mix",
        ),
        (
            vec!["--replay", log, base[0], base[1], "--slo", "GET /orders:p99<1s"],
            "--slo: 'GET /orders' is not an endpoint of the recording; it has: GET /health, HEAD /work, GET /work",
        ),
        (
            vec!["--replay", log, base[0], base[1], "--slo", "get /work:p99<1s"],
            "name the endpoint as METHOD /template",
        ),
        (
            vec!["--replay", log, base[0], base[1], "--slo", "GET /work:p99"],
            "a latency clause is pQ<BOUND",
        ),
        (
            vec!["--replay", log, base[0], base[1], "-m", "POST"],
            "--replay cannot take -m",
        ),
        (
            vec!["--replay", log, "--base", "ftp://x"],
            "--base 'ftp://x': give an http:// or https:// URL",
        ),
    ];
    for (args, says) in cases {
        let out = iolab().arg("capacity").args(&args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}
