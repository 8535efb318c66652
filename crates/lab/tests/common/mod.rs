//! What the lab's end-to-end tests share.
#![allow(dead_code)] // each test binary uses a different part of this

use std::path::PathBuf;

/// The `iolab` binary of the same build (`target/<profile>/iolab`, built by
/// `cargo test --workspace`), or `IOLAB_BIN`: the targets the runner starts.
pub fn iolab_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("IOLAB_BIN") {
        return p.into();
    }
    // target/<profile>/deps/TEST-HASH -> target/<profile>/iolab
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().unwrap().parent().unwrap().join("iolab");
    assert!(
        bin.is_file(),
        "{} not found: build it first (`cargo build -p iolab`; `cargo test --workspace` does) or set IOLAB_BIN",
        bin.display()
    );
    bin
}
