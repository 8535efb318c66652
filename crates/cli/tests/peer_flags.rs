//! What a vegeta, oha, hey, wrk or k6 user types first (issue 35): each
//! peer flag gets one line naming iolab's own (exit 2), `--targets -` reads
//! stdin, `--rate 50/s` is a rate, and a missing URL is named. Against the
//! real binary and a real `iolab serve` on 127.0.0.1.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

/// `iolab ARGS` with `stdin` written to its stdin (a pipe, as `echo ... |`).
fn piped(args: &[&str], stdin: &str) -> Output {
    let mut child = iolab()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // It may refuse and exit before reading: a closed pipe is its answer.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

/// Exit 2, one line starting `error: `, containing every needle.
fn one_line_error(out: &Output, needles: &[&str], what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
    assert!(err.starts_with("error: "), "{what}: {err}");
    for n in needles {
        assert!(err.contains(n), "{what}: '{n}' not in {err}");
    }
}

#[test]
fn peer_flags_point_at_iolabs_own() {
    let url = "http://127.0.0.1:9/";
    let cases: &[(&[&str], &[&str])] = &[
        (&["-z", "10s"], &["-z", "oha's and hey's", "-d/--duration"]),
        (&["-t", "4"], &["wrk's", "--threads", "--timeout"]),
        (&["--output", "r.bin"], &["vegeta's", "-o/--out FILE"]),
        (&["-output", "r.bin"], &["vegeta's", "-o/--out FILE"]),
        (&["--latency-correction"], &["always on"]),
        (&["--disable-keepalive"], &["--new-connection"]),
        (&["-keepalive=false"], &["--new-connection"]),
        (&["--vus", "10"], &["k6's", "--concurrency"]),
        (&["-q", "50"], &["-q is quiet", "--rate N"]),
        (
            &["-d", "{\"id\":1}"],
            &["-d is the duration", "--body TEXT"],
        ),
        (&["-rate=50/s"], &["two", "--rate"]),
        (&["-duration", "1s"], &["two", "--duration"]),
    ];
    for (flags, needles) in cases {
        let mut args = vec!["attack", url, "--rate", "5", "-d", "1s"];
        if flags.first() == Some(&"-d") {
            args.truncate(4);
        }
        args.extend_from_slice(flags);
        let out = iolab().args(&args).stdin(Stdio::null()).output().unwrap();
        one_line_error(&out, needles, &format!("{flags:?}"));
    }
    // The same table serves capacity.
    let out = iolab()
        .args(["capacity", url, "--disable-keepalive"])
        .output()
        .unwrap();
    one_line_error(&out, &["--new-connection"], "capacity --disable-keepalive");
    // A near miss that is no peer's still gets clap's suggestion.
    let out = iolab()
        .args(["attack", url, "--rate", "5", "-d", "1s", "--timout", "1s"])
        .output()
        .unwrap();
    one_line_error(&out, &["--timout", "did you mean '--timeout'"], "--timout");
}

#[test]
fn stdin_with_no_url_names_what_is_missing() {
    let out = piped(
        &["attack", "--rate", "50", "-d", "1s"],
        "GET http://127.0.0.1:9/\n",
    );
    one_line_error(&out, &["missing <URL>", "--targets -", "stdin"], "no URL");
    let out = iolab().args(["capacity"]).output().unwrap();
    one_line_error(
        &out,
        &["missing <URL|PRESET>", "--targets FILE"],
        "capacity",
    );
}

#[test]
fn targets_dash_reads_stdin_and_rate_50_per_s_is_a_rate() {
    let srv = common::serve(&["--model", "loop-async"]);
    let targets = format!("GET {}/work?steps=sleep:1\n", srv.url);
    for rate in ["50/s", "50/1s", "3000/m", "5/100ms"] {
        let out = piped(
            &[
                "attack",
                "--targets",
                "-",
                "--rate",
                rate,
                "-d",
                "400ms",
                "--threads",
                "1",
                "--json",
            ],
            &targets,
        );
        let v = common::json_ok(&out);
        assert_eq!(v["requests"]["planned"], 20, "{rate}: {v}");
        assert_eq!(v["requests"]["ok"], 20, "{rate}: {v}");
        assert_eq!(v["throughput_rps"]["offered"], 50.0, "{rate}");
    }
    let out = iolab()
        .args(["attack", &srv.url, "--rate", "50/x", "-d", "1s"])
        .output()
        .unwrap();
    one_line_error(&out, &["bad rate '50/x'", "3000/1m"], "50/x");
}
