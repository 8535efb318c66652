//! Issue 49 (hostile round 4), through the binary: the live page and merge,
//! capacity's verdicts, hostile documents, `iolab serve` and `k8s`. Each
//! test is named `r38_N_*` after its finding and meets a real misbehaving
//! peer on 127.0.0.1:0 or a real hostile file. The HTTP/2 and gRPC findings
//! are in crates/loadgen/tests/hostile_round4.rs and crates/verify's.
//!
//! One binary, one file per surface: `merge` (shard documents and `merge --live`), `serve`
//! (the pool model and the live page), `documents` (read back, k8s, outside text, `--scale`),
//! `capacity` (dead and failing targets, `--pid`).

#[path = "../common/mod.rs"]
mod common;

mod capacity;
mod documents;
mod merge;
mod serve;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

pub(crate) fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

/// One line on stderr, exit 2, naming `why`, and no panic.
pub(crate) fn refused(out: &Output, why: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(why) && err.trim_end().lines().count() == 1,
        "{why}: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
