//! Hostile flags and files against the real binary (issue 16): each is
//! refused before any load or server starts, with one line on stderr naming
//! the fault, exit 2, nothing on stdout and no file left behind.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

/// Run `cmd` (in an empty directory) and check it was refused quickly in
/// one line holding `names`; the directory stays empty.
fn refused(mut cmd: Command, names: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = cmd.current_dir(dir.path()).output().unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(names), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    out
}

fn attack(extra: &[&str]) -> Command {
    let mut cmd = iolab();
    cmd.args(["attack", "http://127.0.0.1:9/", "--rate", "10", "-d", "10s"])
        .args(extra);
    cmd
}

/// Issue 16, finding 1: the CPU range was expanded before it was checked.
#[test]
fn r16_01_huge_cpu_ranges_are_one_line() {
    for cpus in ["0-4000000000", "0-18446744073709551615"] {
        refused(attack(&["--cpus", cpus]), "--cpus");
    }
}

/// Issue 16, finding 3: an unwritable `--hdr`/`--csv` lost the whole run's
/// results after it ran; it is now refused before the first request.
#[test]
fn r16_03_unwritable_output_paths_are_refused_before_the_load() {
    for flag in ["--hdr", "--csv"] {
        refused(attack(&[flag, "/nonexistent/dir/x.out"]), flag);
    }
}

/// Issue 16, finding 8: `serve --workers 4294967295` printed its URL, then
/// aborted on allocation.
#[test]
fn r16_08_serve_refuses_more_threads_than_the_machine_starts() {
    let mut cmd = iolab();
    cmd.args([
        "serve",
        "--model",
        "loop-blocking",
        "--workers",
        "4294967295",
    ]);
    refused(cmd, "--workers");
}

/// Issue 16, finding 13: endless files were read without bound, and
/// `predict` of a week at 1e9 req/s grew 230 MB/s.
#[test]
fn r16_13_endless_files_and_huge_predictions_are_refused() {
    let mut cmd = iolab();
    cmd.args(["report", "/dev/zero"]);
    refused(cmd, "not a file");
    let mut cmd = iolab();
    cmd.args(["run", "/dev/zero"]);
    refused(cmd, "/dev/zero");
    let mut cmd = iolab();
    cmd.args([
        "predict",
        "--steps",
        "sleep:100",
        "--rate",
        "1e9",
        "--duration",
        "168h",
    ]);
    refused(cmd, "--rate");
    let mut cmd = iolab();
    cmd.args([
        "predict",
        "--steps",
        "sleep:100",
        "--rate",
        "100000",
        "--duration",
        "168h",
    ]);
    refused(cmd, "simulate");
}

/// Issue 16, finding 14: a generator short of file descriptors failed every
/// connect and blamed the target; a closed loop it cannot hold is refused
/// up front, naming `ulimit -n`.
#[test]
fn r16_14_clients_past_the_open_files_limit_are_refused_up_front() {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(r#"ulimit -n 256 && exec "$0" attack http://127.0.0.1:9/ -c 2500 -d 1s"#)
        .arg(env!("CARGO_BIN_EXE_iolab"));
    refused(cmd, "ulimit -n");
}

#[path = "../../../fuzz/corpus.rs"]
mod corpus;

/// Run `cmd` for at most `limit`; `None` if it had to be killed.
fn bounded(mut cmd: Command, limit: Duration) -> Option<Output> {
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let mut child = cmd
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let end = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(child.wait_with_output().unwrap())
}

/// Every hostile command line of `fuzz/corpus/flags` (one argument a line)
/// is refused: exit 2, one line, nothing on stdout, within seconds.
#[test]
fn the_flags_corpus_is_refused_in_one_line() {
    for (name, bytes) in corpus::inputs("flags") {
        let text = String::from_utf8(bytes).unwrap();
        let mut cmd = iolab();
        cmd.args(text.lines());
        let out = bounded(cmd, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{name}: still running after 10 s"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
        assert!(out.stdout.is_empty(), "{name}");
    }
}

/// Every result document of `fuzz/corpus/documents` is rendered (exit 0) or
/// refused in one line (exit 2) in every format, never a panic or a hang.
#[test]
fn the_documents_corpus_is_rendered_or_refused() {
    let dir = corpus::dir("documents");
    for (name, _) in corpus::inputs("documents") {
        for format in ["table", "md", "html", "json", "csv"] {
            let mut cmd = iolab();
            cmd.arg("report")
                .arg(dir.join(&name))
                .args(["--format", format]);
            let out = bounded(cmd, Duration::from_secs(20))
                .unwrap_or_else(|| panic!("{name} {format}: still running after 20 s"));
            let err = String::from_utf8_lossy(&out.stderr);
            match out.status.code() {
                Some(0) => {}
                Some(2) => assert_eq!(err.trim_end().lines().count(), 1, "{name} {format}: {err}"),
                code => panic!("{name} {format}: exit {code:?}: {err}"),
            }
        }
    }
}
