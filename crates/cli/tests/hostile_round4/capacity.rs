//! `iolab capacity` against targets that die, fail at every rate, or are named by a wrong PID.

use super::*;

/// A keep-alive HTTP/1.1 server on 127.0.0.1:0 answering request n (from 0,
/// across connections) with `status(n)`; `None` closes every connection and
/// the port for good (a target that dies).
fn http_server(status: fn(u64) -> Option<u16>) -> String {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
    use std::sync::Arc;
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    let (count, dead) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    std::thread::spawn(move || {
        for s in l.incoming() {
            if dead.load(SeqCst) {
                return; // the listener is dropped: refused from now on
            }
            let Ok(mut s) = s else { continue };
            let (count, dead) = (count.clone(), dead.clone());
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match s.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                    buf.drain(..end);
                    let Some(code) = status(count.fetch_add(1, SeqCst)) else {
                        dead.store(true, SeqCst);
                        // Wake the acceptor so it drops the listener.
                        let _ = TcpStream::connect(s.local_addr().unwrap());
                        return;
                    };
                    let head = format!("HTTP/1.1 {code} X\r\nContent-Length: 0\r\n\r\n");
                    if s.write_all(head.as_bytes()).is_err() || dead.load(SeqCst) {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// `iolab capacity URL --json` with a short search (one window decides a
/// rate, steps of about a second at 20% precision: these tests are about
/// odd targets, not windows); its exit code and document.
fn capacity(url: &str, extra: &[&str]) -> (Option<i32>, Value, String) {
    let out_dir = tempfile::tempdir().unwrap();
    let out = iolab()
        .args(["capacity", url, "--slo", "p99<200ms,success>=99%", "--json"])
        .args(["--min-step", "300ms", "--budget", "0%"])
        .args(["--precision", "20%", "--quiet", "--out"])
        .arg(out_dir.path().join("c"))
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    (out.status.code(), doc, err)
}

/// Issue 49 finding 17: a target dead from the start printed p50/p99 "0s"
/// per step and exited 0; one dying mid-search got "capacity 100/s" and a
/// binding. Now it is said, and neither is claimed.
#[test]
fn r38_17_a_dead_target_is_said_and_gets_no_capacity() {
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", closed.local_addr().unwrap());
    drop(closed);
    // 100 requests decide a step: at 100/s one second, not ten at 10/s.
    let (code, doc, err) = capacity(&url, &["--start", "100", "--max-steps", "4"]);
    let s = &doc["searches"][0];
    assert_eq!(code, Some(1), "{err}");
    assert!(
        s["outcome"]
            .as_str()
            .unwrap()
            .contains("answered no request at any rate"),
        "{s}"
    );
    assert!(s["outcome"].as_str().unwrap().contains("refused"), "{s}");
    assert!(s["capacity_rps"].is_null(), "{s}");
    assert_eq!(
        s["steps"].as_array().unwrap().len(),
        1,
        "one step tells: {s}"
    );
    assert!(err.contains("answered no request"), "{err}");
    // Alive for its first 300 requests, then gone.
    let url = http_server(|n| (n < 300).then_some(200));
    let (_, doc, err) = capacity(&url, &["--start", "100", "--max-steps", "8"]);
    let s = &doc["searches"][0];
    let outcome = s["outcome"].as_str().unwrap();
    assert!(outcome.contains("stopped answering at"), "{outcome}: {err}");
    assert!(s["capacity_rps"].is_null() && s["fit"].is_null(), "{s}");
}

/// Issue 49 finding 18: a target failing 50% of requests at any rate got
/// "capacity 1.6/s" from a one-request step, blamed on its event loop.
#[test]
fn r38_18_a_target_failing_at_every_rate_is_said() {
    let url = http_server(|n| Some(if n % 2 == 0 { 200 } else { 500 }));
    let (_, doc, err) = capacity(&url, &["--start", "400", "--max-steps", "4"]);
    let s = &doc["searches"][0];
    let outcome = s["outcome"].as_str().unwrap();
    assert!(
        s["capacity_rps"].is_null(),
        "no capacity from a target failing half its requests: {s}: {err}"
    );
    assert!(
        outcome.contains("the target fails at every rate: at best 5"),
        "{outcome}"
    );
    assert!(s["fit"].is_null(), "{s}");
}

/// Issue 49 finding 16: `capacity --pid 1` was accepted and its fit read
/// the whole machine; a `--pid` that exits mid-search got no note.
#[test]
fn r38_16_a_pid_that_is_the_machine_or_exits_is_said() {
    let url = http_server(|_| Some(200));
    for (pid, needle) in [
        ("1".to_string(), "--pid 1 is init"),
        (
            std::process::id().to_string(),
            "the shell that started iolab",
        ),
    ] {
        let out = iolab()
            .args(["capacity", &url, "--pid", &pid, "--max-steps", "2"])
            .output()
            .unwrap();
        refused(&out, needle);
    }
    // Steps of about a second: the PID exits in the third.
    let mut child = Command::new("sleep").arg("2").spawn().unwrap();
    let pid = child.id().to_string();
    let (_, doc, err) = capacity(&url, &["--pid", &pid, "--start", "200", "--max-steps", "6"]);
    let _ = child.wait();
    let notes = doc["searches"][0]["notes"].to_string();
    assert!(
        notes.contains(&format!("--pid {pid} exited during the search")),
        "{notes}: {err}"
    );
}
