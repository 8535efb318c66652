//! `verify --held` (`iolab_verify::held`): every built-in model that holds
//! connections passes it; a target that does not hold them, one that echoes
//! without running the message's steps and one whose events are not
//! numbered or stamped as the contract says each fail the check at fault.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use iolab_loadgen::held::Event;
use iolab_model::ModelKind;
use iolab_servers::{start, ServeConfig};
use iolab_verify::held::{judge_events, HELD_CHECKS};
use iolab_verify::{verify_held, VerifyOptions};

fn opts() -> VerifyOptions {
    VerifyOptions {
        timeout: Duration::from_secs(3),
        ..VerifyOptions::default()
    }
}

fn verdicts(url: &str) -> Vec<(String, bool, String)> {
    let checks = verify_held(url, &opts()).unwrap();
    checks
        .into_iter()
        .map(|c| (c.name, c.passed, c.detail))
        .collect()
}

#[test]
fn every_holding_model_passes_the_held_checks_and_sequential_fails_them() {
    for model in ModelKind::built_in() {
        let mut config = ServeConfig::new(model);
        config.grace = Duration::from_secs(1);
        let server = start(config, "127.0.0.1:0".parse().unwrap()).unwrap();
        let got = verdicts(&server.url());
        let names: Vec<&str> = got.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, HELD_CHECKS, "{model}");
        if model == ModelKind::Sequential {
            // It holds no connection, by design: 501 for both routes.
            assert!(got.iter().all(|c| !c.1 && c.2.contains("501")), "{got:?}");
        } else {
            assert!(got.iter().all(|c| c.1), "{model}: {got:?}");
        }
        server.stop().unwrap();
    }
}

/// A WebSocket server that echoes at once, whatever the URL's steps.
fn instant_echo() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let Ok(mut ws) = tungstenite::accept(stream) else {
                    return;
                };
                while let Ok(m) = ws.read() {
                    if m.is_text() && ws.send(m).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

#[test]
fn an_echo_that_skips_the_steps_fails_and_so_does_a_dropped_events_request() {
    let got = verdicts(&instant_echo());
    assert!(got[0].1, "{got:?}");
    assert!(
        !got[1].1 && got[1].2.contains("did not run per message"),
        "{got:?}"
    );
    // tungstenite's accept drops a plain GET /events unanswered.
    assert!(
        !got[2].1 && got[2].2.contains("closed before an answer"),
        "{got:?}"
    );
}

/// A raw `/events` server writing `body` after a chunked event-stream head.
fn events_server(body: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
            let _ = stream.write_all(head.as_bytes());
            for piece in body.split_inclusive("\n\n") {
                let chunk = format!("{:x}\r\n{piece}\r\n", piece.len());
                let _ = stream.write_all(chunk.as_bytes());
                std::thread::sleep(Duration::from_millis(50));
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    url
}

#[test]
fn chunked_events_numbered_from_2_fail_naming_the_event() {
    let url = events_server(
        "id: 2\ndata: {\"seq\":2,\"sent_unix_us\":1}\n\nid: 3\ndata: {}\n\nid: 4\ndata: {}\n\n",
    );
    let got = verdicts(&url);
    assert!(
        !got[2].1 && got[2].2.starts_with("event 1: id Some(2)"),
        "{got:?}"
    );
}

fn event(id: u64, stamp: u64) -> Event {
    Event {
        id: Some(id),
        data: format!("{{\"seq\":{id},\"sent_unix_us\":{stamp}}}"),
    }
}

#[test]
fn stamps_in_milliseconds_or_all_at_once_fail() {
    let now_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64;
    let ok = [
        event(1, now_us),
        event(2, now_us + 50_000),
        event(3, now_us + 100_000),
    ];
    assert!(judge_events(&ok).is_ok());
    let ms = [
        event(1, now_us / 1000),
        event(2, now_us / 1000 + 50),
        event(3, now_us / 1000 + 100),
    ];
    assert!(judge_events(&ms)
        .unwrap_err()
        .to_string()
        .contains("not microseconds"));
    let burst = [
        event(1, now_us),
        event(2, now_us + 10),
        event(3, now_us + 20),
    ];
    assert!(judge_events(&burst)
        .unwrap_err()
        .to_string()
        .contains("not honoured"));
}
