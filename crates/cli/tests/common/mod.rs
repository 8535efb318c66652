//! What every end-to-end test of the binary shares.
#![allow(dead_code)] // each test binary uses a different part of this

use std::process::Output;

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
