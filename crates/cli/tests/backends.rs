//! `iolab backend ...` end to end: the delay service as a process, mc-fill
//! and counts against the real services (`scripts/test` exports their
//! addresses; a missing one fails with the fix), and bad input exits 2.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use assert_cmd::prelude::*;
use predicates::prelude::*;

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run the tests with scripts/test (it runs scripts/services up)")
    })
}

/// One HTTP/1.0 GET on a fresh connection; returns (status, body).
fn get(base: &str, path: &str) -> (u16, String) {
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn the_delay_service_prints_its_url_first_and_counts_hits() {
    let delay = common::spawn_url(&["backend", "http", "--port", "0"]);
    let url = delay.url.clone();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    assert_eq!(get(&url, "/health").0, 200);
    let t = Instant::now();
    assert_eq!(get(&url, "/delay?ms=150").0, 200);
    assert!(t.elapsed() >= Duration::from_millis(150));
    assert_eq!(get(&url, "/delay?ms=0.5").0, 200);
    let (status, body) = get(&url, "/delay?ms=banana");
    assert_eq!(status, 400);
    assert!(body.contains("milliseconds"), "{body}");
    assert_eq!(get(&url, "/nope").0, 404);
    let (_, metrics) = get(&url, "/metrics");
    assert!(metrics.contains("iolab_delay_hits_total 2\n"), "{metrics}");

    // `counts` reads the same number.
    iolab()
        .args(["backend", "counts", "--json", "--http-backend", &url])
        .env_remove("IOLAB_PG")
        .env_remove("IOLAB_MC")
        .assert()
        .success()
        .stdout(predicate::str::contains("\"http_hits\": 2"));
}

#[test]
fn mc_fill_stores_a_1mb_value_that_reads_back_whole() {
    let mc = env("IOLAB_MC");
    iolab()
        .args([
            "backend",
            "mc-fill",
            "--mc",
            &mc,
            "--key",
            "iolab-cli-test",
            "--size",
            "1024000",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("1024000 bytes"));
    let v = iolab_backends::mc::get(&mc, "iolab-cli-test")
        .unwrap()
        .unwrap();
    assert_eq!(v.len(), 1_024_000);
    assert_eq!(&v[..3], b"abc");
}

#[test]
fn counts_reads_every_configured_backend() {
    let (pg, mc) = (env("IOLAB_PG"), env("IOLAB_MC"));
    let out = iolab()
        .args(["backend", "counts", "--json", "--pg", &pg, "--mc", &mc])
        .env_remove("IOLAB_HTTP_BACKEND")
        .output()
        .unwrap();
    common::assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["pg_sleep_calls"].is_u64(), "{v}");
    assert!(v["mc_get_hits"].is_u64(), "{v}");
    assert!(v["http_hits"].is_null(), "{v}");
    iolab()
        .args(["backend", "counts", "--pg", &pg])
        .env_remove("IOLAB_MC")
        .env_remove("IOLAB_HTTP_BACKEND")
        .assert()
        .success()
        .stdout(predicate::str::contains("pg_sleep_calls"));
}

#[test]
fn bad_input_is_a_one_line_error_and_exit_2() {
    let cases: [&[&str]; 4] = [
        &["backend", "mc-fill", "--mc", "nowhere"],
        &[
            "backend",
            "mc-fill",
            "--mc",
            "127.0.0.1:1",
            "--key",
            "has space",
        ],
        &["backend", "counts", "--pg", "mysql://x"],
        &["backend", "http", "--port", "99999"],
    ];
    for args in cases {
        iolab()
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("error"));
    }
    // The message names every backend's flag, from the backend table.
    let out = iolab()
        .args(["backend", "counts"])
        .env_remove("IOLAB_PG")
        .env_remove("IOLAB_MC")
        .env_remove("IOLAB_HTTP_BACKEND")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let flags: Vec<&str> = iolab_model::steps::BackendKind::ALL
        .iter()
        .map(|k| k.def().flag)
        .filter(|f| !f.is_empty())
        .collect();
    assert_eq!(flags.len(), 3, "{flags:?}");
    for flag in flags {
        assert!(err.contains(flag), "{flag}: {err}");
    }
}

#[test]
fn a_memcached_that_is_down_fails_mc_fill_with_exit_1() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    iolab()
        .args(["backend", "mc-fill", "--mc", &format!("127.0.0.1:{port}")])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot store"));
}
