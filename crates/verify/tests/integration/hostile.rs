//! Verify against targets that never finish an answer (issue 16): each
//! stands up a raw server on 127.0.0.1:0 that misbehaves one way, and the
//! test checks verify ends in bounded time, with bounded reads, failing.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_model::verify::VerifyReport;
use iolab_verify::{verify, VerifyOptions};

/// A raw server handing each connection, once its request is read, to
/// `serve` on a thread of its own.
fn fake(serve: fn(TcpStream)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let _ = stream.read(&mut [0u8; 4096]);
                serve(stream);
            });
        }
    });
    url
}

/// Holds the connection open for a minute and never answers.
fn silent(stream: TcpStream) {
    std::thread::sleep(Duration::from_secs(60));
    drop(stream);
}

/// A head, then one body byte every 200 ms for a minute.
fn trickle(mut stream: TcpStream) {
    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
    for _ in 0..300 {
        std::thread::sleep(Duration::from_millis(200));
        if stream.write_all(b"x").is_err() {
            return;
        }
    }
}

/// A body read until close that never ends (up to 100 GB).
fn endless(mut stream: TcpStream) {
    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
    let chunk = vec![b'0'; 64 * 1024];
    for _ in 0..(100u64 << 30) / chunk.len() as u64 {
        if stream.write_all(&chunk).is_err() {
            return;
        }
    }
}

fn run(url: &str, timeout: Duration, deadline: Duration) -> (VerifyReport, Duration) {
    let opts = VerifyOptions {
        timeout,
        deadline,
        ..VerifyOptions::default()
    };
    let started = Instant::now();
    let report = verify(url, &opts).expect("verify runs");
    (report, started.elapsed())
}

/// Issue 16, finding 9: verify against a silent target took 23 checks x
/// 10 s, and a trickling one longer; now the whole verify has a deadline.
#[test]
fn r16_09_silent_and_trickling_targets_fail_within_the_deadline() {
    for (what, serve) in [("silent", silent as fn(TcpStream)), ("trickle", trickle)] {
        let url = fake(serve);
        let (report, took) = run(&url, Duration::from_secs(10), Duration::from_secs(2));
        assert!(!report.passed(), "{what}");
        assert!(took < Duration::from_secs(6), "{what}: took {took:?}");
        assert!(
            report.checks.iter().any(|c| c.detail.contains("deadline")),
            "{what}: no check names the deadline"
        );
    }
}

/// Issue 16, finding 9: a streamed 100 GB body grew verify to 2.2 GB; the
/// body is now cut at its cap and the check fails naming it.
#[test]
fn r16_09_an_endless_body_is_cut_at_the_cap() {
    let url = fake(endless);
    let (report, took) = run(&url, Duration::from_secs(10), Duration::from_secs(60));
    assert!(!report.passed());
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let capped = report
        .checks
        .iter()
        .filter(|c| c.detail.contains("cap"))
        .count();
    assert!(capped > 0, "{:#?}", report.checks);
}

/// Issue 16, finding 10: Ctrl-C was ignored while verify waited on a target
/// that hangs. Setting the cancel flag ends the wait within a tick.
#[test]
fn r16_10_cancel_ends_verify_at_once() {
    let url = fake(silent);
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, Ordering::Relaxed);
    });
    let opts = VerifyOptions {
        timeout: Duration::from_secs(10),
        deadline: Duration::from_secs(60),
        cancel: Some(cancel),
        ..VerifyOptions::default()
    };
    let started = Instant::now();
    let report = verify(&url, &opts).expect("verify runs");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(!report.passed());
    assert!(
        report
            .checks
            .iter()
            .any(|c| c.detail.contains("interrupted")),
        "{:#?}",
        report.checks
    );
}

#[path = "../../../../fuzz/corpus.rs"]
mod corpus;

/// A raw server answering each connection with `bytes`, then closing.
fn replay(bytes: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = stream.read(&mut [0u8; 4096]);
            let _ = stream.write_all(&bytes);
        }
    });
    url
}

/// Every hostile answer of `fuzz/corpus/http-responses` is read or refused
/// by verify's client within its deadline, the body within its cap.
#[test]
fn the_http_responses_corpus_is_read_within_its_limits() {
    for (name, bytes) in corpus::inputs("http-responses") {
        let target = iolab_verify::client::Endpoint::parse(&replay(bytes)).unwrap();
        let limits = iolab_verify::client::Limits {
            max_body: 1 << 20,
            ..iolab_verify::client::Limits::within(Duration::from_secs(2))
        };
        let started = Instant::now();
        let answer = target.get_with("/", &limits);
        let took = started.elapsed();
        assert!(took < Duration::from_secs(4), "{name}: took {took:?}");
        if let Ok(resp) = answer {
            assert!(resp.body.len() <= 1 << 20, "{name}");
        }
    }
}
