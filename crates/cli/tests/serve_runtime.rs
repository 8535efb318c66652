//! `iolab serve --runtime NAME` (a runtime folder, here the JVM's): bad input is a one-line usage error (exit 2)
//! before anything starts, and a real Spring target started this way prints
//! its URL first, serves the contract and stops on SIGTERM with exit 0.

mod common;

use common::{get, root};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use assert_cmd::Command as AssertCommand;
use predicates::str::contains;

fn usage_error(args: &[&str], env: Option<(&str, &str)>, needle: &str) {
    let mut cmd = AssertCommand::new(env!("CARGO_BIN_EXE_iolab"));
    cmd.arg("serve").args(args).timeout(Duration::from_secs(30));
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    cmd.assert()
        .code(2)
        .stdout("")
        .stderr(contains(needle))
        .stderr(predicates::function::function(|s: &str| {
            s.trim_end().lines().count() == 1
        }));
}

#[test]
fn bad_jvm_input_is_a_usage_error() {
    usage_error(
        &["--runtime", "graal", "--model", "pool"],
        None,
        "unknown runtime 'graal'",
    );
    usage_error(
        &["--runtime", "jvm", "--model", "thread-per-request"],
        None,
        "has no jvm target",
    );
    usage_error(
        &[
            "--runtime",
            "jvm",
            "--model",
            "loop-async",
            "--threads",
            "4",
        ],
        None,
        "--threads does not apply to jvm model 'loop-async'",
    );
    usage_error(
        &["--runtime", "jvm", "--model", "pool", "--max-threads", "4"],
        None,
        "--max-threads does not apply",
    );
    usage_error(
        &["--model", "pool", "--option", "synchronized"],
        None,
        "add --runtime",
    );
    usage_error(
        &["--runtime", "jvm", "--model", "pool", "--bind", "0.0.0.0"],
        None,
        "127.0.0.1 only",
    );
    usage_error(
        &["--runtime", "jvm", "--model", "pool"],
        Some(("IOLAB_ROOT", "/nonexistent/iolab")),
        "IOLAB_ROOT=/nonexistent/iolab holds no runtimes/README.md",
    );
    // The Rust runtime still refuses the JVM-only model.
    usage_error(&["--model", "virtual", "--port", "0"], None, "virtual");
}

fn wait(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn a_jvm_target_prints_its_url_serves_and_stops_on_sigterm() {
    let jdk = Command::new(root().join("runtimes/jvm/start"))
        .arg("--java-home")
        .output()
        .unwrap();
    if !jdk.status.success() {
        // runtimes/jvm/test (run by scripts/test) fails loudly without a JDK 25.
        eprintln!(
            "skipped: no JDK 25 ({})",
            String::from_utf8_lossy(&jdk.stderr).trim()
        );
        return;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "serve",
            "--runtime",
            "jvm",
            "--model",
            "virtual",
            "--option",
            "synchronized",
            "--port",
            "0",
        ])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    // A first build and a JVM start on 2 busy cores can take minutes.
    let line = rx.recv_timeout(Duration::from_secs(400));
    let url = match line {
        Ok(l) => l.trim_end().to_string(),
        Err(_) => {
            let _ = child.kill();
            panic!("no URL line within 400 s");
        }
    };
    assert!(
        url.starts_with("http://127.0.0.1:") && url.len() > "http://127.0.0.1:".len(),
        "first line: {url:?}"
    );
    let (status, body) = get(&url, "/work?steps=sleep:50").unwrap();
    assert!(status.contains(" 200"), "{status} {body}");
    assert!(
        body.starts_with(r#"{"ok":true,"model":"virtual","steps":1,"#),
        "{body}"
    );
    let (status, _) = get(&url, "/nope").unwrap();
    assert!(status.contains(" 404"), "{status}");

    common::signal(child.id(), "TERM");
    let status = wait(&mut child, Duration::from_secs(30));
    let Some(status) = status else {
        let _ = child.kill();
        panic!("iolab serve --runtime jvm still running 30 s after SIGTERM");
    };
    assert_eq!(status.code(), Some(0), "{status}");
    // The JVM went with it: nothing answers on its port any more.
    assert!(get(&url, "/health").is_err(), "{url} still answers");
}
