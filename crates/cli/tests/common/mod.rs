//! What every end-to-end test of the binary shares.
#![allow(dead_code)] // each test binary uses a different part of this

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Output;
use std::time::Duration;

/// Fail the test with the command's stderr unless it exited 0.
pub fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The stdout of a successful command, parsed as one JSON document.
pub fn json_ok(out: &Output) -> serde_json::Value {
    assert_ok(out);
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// GET over a raw socket (`Connection: close`, 20 s read timeout): status
/// line and body.
pub fn get(url: &str, path: &str) -> std::io::Result<(String, String)> {
    let addr = url.strip_prefix("http://").unwrap();
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(20)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    Ok((
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    ))
}

/// Send `signal` (`"INT"`, `"TERM"`) to process `pid`, as a user's Ctrl-C or
/// a service manager would; fails the test if it cannot be delivered.
pub fn signal(pid: u32, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} {pid}");
}
