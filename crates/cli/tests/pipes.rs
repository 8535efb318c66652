//! A reader that leaves early (`iolab presets | head -1`) is no reason to
//! panic: the commands that print lists stop quietly, exit 0.

use std::process::{Command, Stdio};

#[test]
fn a_closed_stdout_is_not_a_panic() {
    for args in [&["presets"][..], &["run", "--dry-run", "showdown"][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_iolab"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader leaves before a byte is written: every write hits a closed pipe.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    }
}
