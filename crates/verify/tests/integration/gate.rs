//! The gate catches broken targets: each test stands up a small real server
//! on 127.0.0.1:0 that breaks the contract in one way and checks that verify
//! names the fault (and passes a real model).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use iolab_model::ModelKind;
use iolab_verify::{verify, VerifyError, VerifyOptions};

/// A raw server answering every request with `answer(request_head)`.
fn fake(answer: fn(&str) -> String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let _ = stream.write_all(answer(&head).as_bytes());
        }
    });
    url
}

fn opts() -> VerifyOptions {
    VerifyOptions {
        model: None,
        timeout: Duration::from_secs(3),
        ..VerifyOptions::default()
    }
}

fn failed(report: &iolab_model::verify::VerifyReport) -> Vec<String> {
    report
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.name.clone())
        .collect()
}

#[test]
fn garbage_fails_every_check() {
    let url = fake(|_| "hello there\r\n\r\n".to_string());
    let report = verify(&url, &opts()).unwrap();
    assert!(!report.passed());
    assert!(
        report.checks.iter().all(|c| !c.passed),
        "{:?}",
        report.checks
    );
    assert!(
        report.checks[0].detail.contains("not HTTP"),
        "{}",
        report.checks[0].detail
    );
}

#[test]
fn a_target_that_ignores_steps_is_caught() {
    // Answers 200 with a plausible body at once, for every path.
    let url = fake(|_| {
        let body = r#"{"ok":true,"model":"pool","steps":1,"elapsed_ms":0.1}"#;
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    });
    let report = verify(&url, &opts()).unwrap();
    let failed = failed(&report);
    for name in [
        "sleep-200",
        "bad-steps-unclosed",
        "missing-steps",
        "unknown-path",
        "metrics-parse",
    ] {
        assert!(
            failed.iter().any(|f| f == name),
            "{name} should fail: {failed:?}"
        );
    }
    let sleep = report
        .checks
        .iter()
        .find(|c| c.name == "sleep-200")
        .unwrap();
    assert!(sleep.detail.contains("at least 200 ms"), "{}", sleep.detail);
}

#[test]
fn a_real_model_passes_and_a_wrong_model_name_fails() {
    let mut config = iolab_servers::ServeConfig::new(ModelKind::Pool);
    config.grace = Duration::from_secs(1);
    let server = iolab_servers::start(config, "127.0.0.1:0".parse().unwrap()).unwrap();
    let report = verify(&server.url(), &opts()).unwrap();
    assert!(report.passed(), "{:?}", failed(&report));
    let wrong = VerifyOptions {
        model: Some("loop-async".into()),
        ..opts()
    };
    let report = verify(&server.url(), &wrong).unwrap();
    assert!(failed(&report).contains(&"cpu-small".to_string()));
    server.stop().unwrap();
}

#[test]
fn nothing_listening_and_bad_urls_are_errors() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = verify(&format!("http://127.0.0.1:{port}"), &opts()).unwrap_err();
    assert!(matches!(e, VerifyError::Unreachable { .. }), "{e}");
    assert!(matches!(
        verify("ftp://127.0.0.1:1", &opts()).unwrap_err(),
        VerifyError::BadUrl(_)
    ));
    assert!(matches!(
        verify("127.0.0.1:8080", &opts()).unwrap_err(),
        VerifyError::BadUrl(_)
    ));
}

/// Issue 30, finding 5: a target that sends `103 Early Hints` and `100
/// Continue` before each answer (a CDN or proxy in front of it) was "no
/// complete answer" after the whole deadline. Here a real model sits behind
/// a proxy on loopback that adds both to every answer: verify passes it.
#[test]
fn r30_05_verify_skips_interim_answers() {
    let mut config = iolab_servers::ServeConfig::new(ModelKind::Pool);
    config.grace = Duration::from_secs(1);
    let server = iolab_servers::start(config, "127.0.0.1:0".parse().unwrap()).unwrap();
    let url = interim_proxy(server.url());
    let started = std::time::Instant::now();
    let report = verify(&url, &opts()).unwrap();
    assert!(report.passed(), "{:?}", failed(&report));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    server.stop().unwrap();
}

/// A proxy to `upstream` (`http://HOST:PORT`) writing two interim answers
/// before each upstream answer; one request per connection.
fn interim_proxy(upstream: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let upstream = upstream.trim_start_matches("http://").to_string();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let upstream = upstream.clone();
            std::thread::spawn(move || relay(client, &upstream));
        }
    });
    url
}

fn relay(mut client: std::net::TcpStream, upstream: &str) {
    let _ = client.set_read_timeout(Some(Duration::from_secs(5)));
    let mut request = Vec::new();
    let mut byte = [0u8; 1];
    while !request.ends_with(b"\r\n\r\n") {
        match client.read(&mut byte) {
            Ok(1) => request.push(byte[0]),
            _ => return,
        }
    }
    let Ok(mut up) = std::net::TcpStream::connect(upstream) else {
        return;
    };
    let interim = b"HTTP/1.1 103 Early Hints\r\nLink: </app.css>; rel=preload\r\n\r\n\
                    HTTP/1.1 100 Continue\r\n\r\n";
    if up.write_all(&request).is_err() || client.write_all(interim).is_err() {
        return;
    }
    let _ = std::io::copy(&mut up, &mut client);
}
