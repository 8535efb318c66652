//! `iolab whatif` end to end, the default tier's smoke: one small built-in
//! pair (presets/test/whatif-smoke.toml) runs through the real binary
//! and leaves a whole document (A searched, fitted and named; B predicted,
//! calibrated and measured; every error recomputed from the capacities
//! beside it; the saved document re-rendered). Whether the predictions are
//! right is the slow tier's question (`tests/whatif_pairs.rs`,
//! `tests/whatif_runtimes.rs`): one CI-size pair on a noisy 2-core machine
//! says more about the machine than about the prediction.

mod common;

use std::process::Command;

use common::whatif::{bracket_error_pct, smoke};

#[test]
fn one_small_pair_runs_end_to_end_and_leaves_a_whole_document() {
    smoke("presets/test/whatif-smoke.toml");
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
