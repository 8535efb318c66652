//! `iolab verify URL` against a real `iolab serve` process, a broken target,
//! and nothing at all.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use assert_cmd::Command as AssertCommand;
use predicates::str::contains;

#[test]
fn passes_against_a_served_model() {
    let target = common::serve(&["--model", "loop-offload"]);
    let url = target.url.as_str();
    let out = AssertCommand::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["verify", url, "--model", "loop-offload"])
        .timeout(Duration::from_secs(60))
        .assert();
    drop(target);
    out.code(0)
        .stdout(contains("ok   health"))
        .stdout(contains("sleep-200"))
        .stdout(contains("metrics-count-work"))
        .stdout(contains(" 0 failed"));
}

#[test]
fn fails_with_one_line_per_check_against_a_broken_target() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let mut buf = [0u8; 2048];
            let _ = s.read(&mut buf);
            let _ =
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
        }
    });
    AssertCommand::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["verify", &url, "--timeout", "3s"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1)
        .stdout(contains("FAIL sleep-200"))
        .stdout(contains("FAIL metrics-parse"));
}

#[test]
fn bad_url_or_nothing_listening_exits_2() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    AssertCommand::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["verify", &format!("http://127.0.0.1:{port}")])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(2)
        .stderr(contains("cannot connect"));
    AssertCommand::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["verify", "localhost:8080"])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(2)
        .stderr(contains("bad URL"));
}
