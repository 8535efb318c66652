//! `iolab whatif` end to end at CI size, the pairs that need only the
//! built-in models (presets/test/whatif-{cpu,rust-pool}.toml: short steps,
//! small rates, a debug build's costs): A fitted as a black box must be
//! named by the resource its configuration sets, and each change B
//! predicted from that fit alone must land near B's measured capacity:
//! within the goal, 15%, and the noise of a CI-size measurement
//! (`common::whatif`). The pairs run in one test, one after the other: two
//! tests would load the same pinned cores at once. The runtime pairs are
//! `tests/whatif_runtimes.rs`, the JVM pairs among them.
//! (docs/capacity.md says why).

mod common;

use std::process::Command;

use common::whatif::{bracket_error_pct, check_pairs, PairCheck, CI_NOISE_PCT};

/// The CPU binds: pool(8) computing on one core -> loop-async, no gain.
/// Threads bind: pool(4) -> loop-async.
const PAIRS: [PairCheck; 2] = [
    ("presets/test/whatif-cpu.toml", CI_NOISE_PCT),
    ("presets/test/whatif-rust-pool.toml", CI_NOISE_PCT),
];

#[test]
fn every_pair_names_a_and_predicts_b_within_the_goal_and_the_noise() {
    check_pairs(&PAIRS);
}

#[test]
fn a_prediction_is_compared_with_the_nearer_end_of_the_bracket() {
    assert_eq!(bracket_error_pct(410.0, 400.0, Some(432.0)), 0.0);
    assert!((bracket_error_pct(475.2, 400.0, Some(432.0)) - 10.0).abs() < 1e-9);
    assert!((bracket_error_pct(340.0, 400.0, Some(432.0)) + 15.0).abs() < 1e-9);
    // Nothing failed: the bottom is the only end.
    assert!((bracket_error_pct(440.0, 400.0, None) - 10.0).abs() < 1e-9);
}

#[test]
fn a_preset_that_is_no_pair_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.toml");
    std::fs::write(
        &one,
        "name = \"one\"\ndescription = \"d\"\n[capacity]\nslo = \"p99<100ms\"\n[load]\nsteps = \"sleep:10\"\nrate = 10\nduration = \"1s\"\n[[targets]]\nmodel = \"pool\"\n[whatif]\nexpect = \"threads\"\n",
    )
    .unwrap();
    let none = dir.path().join("none.toml");
    std::fs::write(
        &none,
        "name = \"none\"\ndescription = \"d\"\n[capacity]\nslo = \"p99<100ms\"\n[load]\nsteps = \"sleep:10\"\nrate = 10\nduration = \"1s\"\n[[targets]]\nmodel = \"pool\"\n[[targets]]\nmodel = \"loop-async\"\n",
    )
    .unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        std::fs::read_to_string(&none).unwrap() + "[whatif]\nexpect = \"gremlins\"\n",
    )
    .unwrap();
    for (file, needle) in [
        (&one, "needs two [[targets]]"),
        (&none, "no [whatif] table"),
        (&bad, "[whatif]"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
            .arg("whatif")
            .arg(file)
            .arg("--out")
            .arg(dir.path().join("out"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{needle}: {err}");
        assert!(!dir.path().join("out").exists());
    }
}
