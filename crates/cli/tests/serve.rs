//! `iolab serve` as the experiment runner uses it: a separate process whose
//! first stdout line is its URL, stopped with SIGTERM, exiting 0.

mod common;

use common::get;
use std::process::Child;
use std::time::{Duration, Instant};

use assert_cmd::Command as AssertCommand;
use predicates::str::contains;

fn sigterm(child: &Child) {
    common::signal(child.id(), "TERM");
}

fn wait(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("iolab serve did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn prints_its_url_first_serves_and_stops_on_sigterm() {
    for model in ["pool", "loop-async"] {
        let mut served = common::serve(&["--model", model]);
        let (child, url) = (&mut served.child, served.url.clone());
        assert!(url.starts_with("http://127.0.0.1:"), "first line: {url}");
        let (status, _) = get(&url, "/health").unwrap();
        assert!(status.contains("200"), "{status}");
        let (status, body) = get(&url, "/work?steps=sleep:10").unwrap();
        assert!(status.contains("200"), "{status}");
        assert!(
            body.starts_with(&format!("{{\"ok\":true,\"model\":\"{model}\",\"steps\":1,")),
            "{body}"
        );
        sigterm(child);
        assert!(
            wait(child, Duration::from_secs(10)).success(),
            "{model} exits 0"
        );
    }
}

#[test]
fn sigterm_lets_in_flight_requests_finish() {
    let mut served = common::serve(&["--model", "thread-per-request", "--grace", "5s"]);
    let (child, u) = (&mut served.child, served.url.clone());
    let inflight = std::thread::spawn(move || get(&u, "/work?steps=sleep:500"));
    std::thread::sleep(Duration::from_millis(200));
    sigterm(child);
    let (status, _) = inflight.join().unwrap().unwrap();
    assert!(status.contains("200"), "in-flight answered: {status}");
    assert!(wait(child, Duration::from_secs(10)).success());
}

#[test]
fn bad_flags_are_usage_errors() {
    let cases: [(&[&str], &str); 5] = [
        (&["--model", "fibers"], "unknown model 'fibers'"),
        (&["--model", "virtual"], "--runtime"),
        (
            &["--model", "pool", "--threads", "0"],
            "threads = 0 is out of range",
        ),
        (&["--model", "pool", "--grace", "5"], "--grace"),
        (&["--model", "pool", "--cpus", "9-1"], "--cpus"),
    ];
    for (args, msg) in cases {
        AssertCommand::new(env!("CARGO_BIN_EXE_iolab"))
            .arg("serve")
            .args(args)
            .args(["--port", "0"])
            .timeout(Duration::from_secs(10))
            .assert()
            .code(2)
            .stderr(contains(msg));
    }
}

#[test]
fn a_taken_port_is_a_usage_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    AssertCommand::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["serve", "--model", "pool", "--port", &port])
        .timeout(Duration::from_secs(10))
        .assert()
        .code(2)
        .stderr(contains("cannot listen"));
}

/// Send `request` on a new connection; what comes back within 5 s (until
/// the server closes, or the read times out).
fn exchange(url: &str, request: &[u8], then: &[u8]) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(url.strip_prefix("http://").unwrap()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(request).unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    if !then.is_empty() {
        // Expect: 100-continue: the interim answer comes before the body is sent.
        let n = s.read(&mut chunk).unwrap_or(0);
        got.extend_from_slice(&chunk[..n]);
        s.write_all(then).unwrap();
    }
    while let Ok(n) = s.read(&mut chunk) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&chunk[..n]);
        if got.windows(4).filter(|w| w == b"\r\n\r\n").count() >= 2 || !then.is_empty() {
            break;
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Issue 30, finding 19: an LF-only request and `Expect: 100-continue` were
/// never answered, and two Content-Lengths (a smuggling vector) were taken.
#[test]
fn r30_19_serve_answers_lf_heads_and_expect_and_refuses_two_lengths() {
    for model in ["pool", "loop-async"] {
        let served = common::serve(&["--model", model]);
        let url = &served.url;
        let got = exchange(url, b"GET /health HTTP/1.1\n\n", b"");
        assert!(got.starts_with("HTTP/1.1 200"), "{model}: {got}");
        let got = exchange(
            url,
            b"POST /health HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n",
            b"abc",
        );
        assert!(
            got.starts_with("HTTP/1.1 100 Continue\r\n\r\n"),
            "{model}: {got}"
        );
        // ... then, the body read, the final answer.
        assert_eq!(got.matches("HTTP/1.1 ").count(), 2, "{model}: {got}");
        let two = b"POST /health HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\nab";
        let got = exchange(url, two, b"");
        assert!(got.starts_with("HTTP/1.1 400"), "{model}: {got}");
    }
}
