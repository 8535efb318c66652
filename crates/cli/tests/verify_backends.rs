//! `iolab verify` with backends, against the real services (`scripts/test`
//! exports IOLAB_PG, IOLAB_MC, IOLAB_HTTP_BACKEND): it passes against an
//! `iolab serve` that calls them, and fails against a target that answers
//! and counts backend calls in its `/metrics` but never makes them.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use assert_cmd::Command as AssertCommand;
use predicates::prelude::*;
use predicates::str::contains;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run the tests with scripts/test (it runs scripts/services up)")
    })
}

#[test]
fn passes_against_a_served_model_that_calls_its_backends() {
    let (pg, mc, http) = (env("IOLAB_PG"), env("IOLAB_MC"), env("IOLAB_HTTP_BACKEND"));
    let target = common::spawn_url(&[
        "serve",
        "--model",
        "pool",
        "--port",
        "0",
        "--pg",
        &pg,
        "--mc",
        &mc,
        "--http-backend",
        &http,
    ]);
    let url = target.url.clone();
    let out = AssertCommand::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["verify", &url, "--model", "pool"])
        .args(["--pg", &pg, "--mc", &mc, "--http-backend", &http])
        .timeout(Duration::from_secs(90))
        .assert();
    out.code(0)
        .stdout(contains("ok   backend-pg-counted"))
        .stdout(contains("ok   backend-mc-counted"))
        .stdout(contains("ok   backend-http-counted"))
        .stdout(contains("memcached hits of verify's own key moved by 5"))
        .stdout(contains(" 0 failed"));
}

/// A target that answers every `/work` with the contract's JSON and counts
/// the backend calls its steps name in `/metrics`, without making any.
fn liar() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let counts: Arc<[AtomicU64; 5]> = Arc::new(Default::default());
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]).to_string();
            let path = req.split_whitespace().nth(1).unwrap_or("/").to_string();
            let body = if let Some(steps) = path.strip_prefix("/work?steps=") {
                counts[0].fetch_add(1, Ordering::Relaxed);
                for (i, kind) in ["sleep:", "pg:", "mc:", "http:"].iter().enumerate() {
                    if steps.starts_with(kind) {
                        counts[i + 1].fetch_add(1, Ordering::Relaxed);
                    }
                }
                r#"{"ok":true,"steps":1,"model":"pool"}"#.to_string()
            } else if path == "/metrics" {
                let c = |i: usize| counts[i].load(Ordering::Relaxed);
                format!(
                    "iolab_requests_in_flight 0\niolab_requests_queued 0\n\
                     iolab_requests_completed_total {}\niolab_requests_rejected_total 0\n\
                     iolab_threads 1\n\
                     iolab_backend_calls_total{{kind=\"sleep\"}} {}\n\
                     iolab_backend_calls_total{{kind=\"pg\"}} {}\n\
                     iolab_backend_calls_total{{kind=\"mc\"}} {}\n\
                     iolab_backend_calls_total{{kind=\"http\"}} {}\n",
                    c(0),
                    c(1),
                    c(2),
                    c(3),
                    c(4)
                )
            } else {
                "ok".to_string()
            };
            let ctype = if body.starts_with('{') {
                "application/json"
            } else {
                "text/plain; version=0.0.4"
            };
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

#[test]
fn fails_against_a_target_that_claims_backend_work_it_never_does() {
    let (pg, mc) = (env("IOLAB_PG"), env("IOLAB_MC"));
    // A delay service of our own: nothing else moves its counter.
    let delay = common::spawn_url(&["backend", "http", "--port", "0"]);
    let http = delay.url.clone();
    let url = liar();
    let assert = AssertCommand::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["verify", &url, "--timeout", "3s"])
        .args(["--pg", &pg, "--mc", &mc, "--http-backend", &http])
        .timeout(Duration::from_secs(90))
        .assert()
        .code(1);
    let out = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    // It answers and counts as if it did the work...
    for ok in [
        "ok   backend-mc-answers",
        "ok   backend-mc-metrics",
        "ok   backend-http-answers",
        "ok   backend-http-metrics",
    ] {
        assert!(out.contains(ok), "no '{ok}' in:\n{out}");
    }
    // ...but the backends saw none of it: memcached counts our own key
    // exactly, our private delay service sees no other traffic.
    assert!(
        out.contains("FAIL backend-mc-counted")
            && out.contains("the backend did less work than the target claims"),
        "{out}"
    );
    assert!(
        out.contains("memcached hits of verify's own key moved by 0"),
        "{out}"
    );
    assert!(out.contains("FAIL backend-http-counted"), "{out}");
    assert!(out.contains("delay service hits moved by 0"), "{out}");
}

#[test]
fn no_backends_skips_the_backend_checks() {
    let target = common::spawn_url(&["serve", "--model", "pool", "--port", "0"]);
    let url = target.url.clone();
    AssertCommand::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["verify", &url, "--no-backends"])
        .env("IOLAB_MC", "127.0.0.1:1")
        .timeout(Duration::from_secs(60))
        .assert()
        .code(0)
        .stdout(contains("backend-").not());
}

#[test]
fn a_bad_backend_address_is_a_usage_error() {
    AssertCommand::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["verify", "http://127.0.0.1:1", "--mc", "nowhere"])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(2)
        .stderr(contains("HOST:PORT"));
}
