//! The fuzz corpus kept in `fuzz/corpus/<target>/`, shared by the fuzz tests
//! of every crate (`#[path]`-included, so it is one file): each file is one
//! hostile input, replayed whole by its target's test on every `cargo test`,
//! beside proptest-made inputs. How many proptest cases run is bounded for
//! the test command and can be raised for a long session:
//! `IOLAB_FUZZ_CASES=100000 cargo test -p iolab-model --test fuzz`.
#![allow(dead_code)] // each test binary uses a different part of this

use std::path::PathBuf;

/// The folder of one target's corpus.
pub fn dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

/// Every input of one target, by file name, in name order.
pub fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = dir(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no input", dir.display());
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("a readable corpus file"))
        })
        .collect()
}

/// Proptest cases per property: `default` in the test command, or
/// `IOLAB_FUZZ_CASES`.
pub fn cases(default: u32) -> u32 {
    std::env::var("IOLAB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
