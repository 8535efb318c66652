//! Files and stdout against the real binary (issue 30): every file input is
//! read by one capped, regular-file-checked reader, every output written by
//! one writer that never renames over a device or a symlink and checks
//! every write, stdout included. Tests named `r30_NN_*` reproduce finding NN.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    iolab().current_dir(dir).args(args).output().unwrap()
}

fn one_line_exit(out: &Output, code: i32, names: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(names), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A short attack against a closed port: every request refused, at once.
const REFUSED: [&str; 6] = [
    "attack",
    "http://127.0.0.1:9/",
    "--rate",
    "20",
    "-d",
    "0.2s",
];

/// Finding 3: `/dev/zero` as a body file, a targets file or an `@file` line
/// was read without bound (2.4 GB in 1.5 s).
#[test]
fn r30_03_devices_as_input_files_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("targets.txt"),
        "POST http://127.0.0.1:9/\n@/dev/zero\n",
    )
    .unwrap();
    for (args, names) in [
        (
            &["--body-file", "/dev/zero"][..],
            "--body-file /dev/zero: is a character device",
        ),
        (
            &["--targets", "/dev/zero"][..],
            "--targets /dev/zero: is a character device",
        ),
        (
            &["--targets", "targets.txt"][..],
            "/dev/zero: is a character device",
        ),
    ] {
        let t = Instant::now();
        let out = iolab()
            .current_dir(dir.path())
            .args(["attack", "--rate", "10", "-d", "1s"])
            .args(if args[0] == "--targets" {
                vec![]
            } else {
                vec!["http://127.0.0.1:9/"]
            })
            .args(args)
            .output()
            .unwrap();
        one_line_exit(&out, 2, names);
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}

/// Finding 3: a FIFO named `*.json` in a folder hung `merge DIR/`.
#[test]
fn r30_03_a_fifo_in_a_merged_folder_is_not_a_document() {
    let dir = tempfile::tempdir().unwrap();
    let shards = dir.path().join("shards");
    std::fs::create_dir(&shards).unwrap();
    let fifo = std::ffi::CString::new(shards.join("x.json").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let t = Instant::now();
    let out = run_in(dir.path(), &["merge", "shards/"]);
    assert!(t.elapsed() < Duration::from_secs(5));
    one_line_exit(&out, 2, "");
}

/// Finding 2: `-o`, `--csv`, `--hdr` renamed a temporary file over a
/// symlink (the link became a file) or a device node.
#[test]
fn r30_02_outputs_keep_symlinks_and_write_through_devices() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["real.json", "real.csv", "real.hdr"] {
        std::os::unix::fs::symlink(name, dir.path().join(format!("link-{name}"))).unwrap();
    }
    let mut args = REFUSED.to_vec();
    args.extend([
        "-o",
        "link-real.json",
        "--csv",
        "link-real.csv",
        "--hdr",
        "/dev/null",
    ]);
    let out = run_in(dir.path(), &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["real.json", "real.csv"] {
        let link = dir.path().join(format!("link-{name}"));
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(!std::fs::read(dir.path().join(name)).unwrap().is_empty());
    }
    let null = std::fs::metadata("/dev/null").unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_char_device(
        &null.file_type()
    ));
    // stdout named as a file: written through, after the table.
    let mut args = REFUSED.to_vec();
    args.extend(["--csv", "/dev/stdout"]);
    let out = run_in(dir.path(), &args);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("intended_ns") || text.contains("intended"),
        "{text}"
    );
}

/// Finding 11: `attack`, `report`, `merge`, `run` exited 0 with nothing
/// written when stdout was `/dev/full`.
#[test]
fn r30_11_a_full_stdout_is_exit_1_in_one_line() {
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let out = iolab()
        .current_dir(dir.path())
        .args(REFUSED)
        .stdout(full())
        .output()
        .unwrap();
    one_line_exit(&out, 1, "cannot write to stdout");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/attack-open.json");
    let out = iolab()
        .arg("report")
        .arg(&fixture)
        .stdout(full())
        .output()
        .unwrap();
    one_line_exit(&out, 1, "No space left on device");
    // A reader that left is no failure.
    let mut child = iolab()
        .arg("report")
        .arg(&fixture)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
