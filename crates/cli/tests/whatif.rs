//! `iolab whatif` end to end at CI size, the pairs that need only the
//! built-in models (presets/test/whatif-{cpu,rust-pool}.toml: short steps,
//! small rates, a debug build's costs; the rust-pool one is `#[ignore]`d,
//! its reason says why): A fitted as a
//! black box must be named by the resource its configuration sets, and each
//! change B predicted from that fit alone must land near B's measured
//! capacity: within the goal, 15%, and the noise of a CI-size measurement
//! (`common::whatif`). The runtime pairs are
//! `tests/whatif_runtimes.rs`; the JVM pool pair is not at CI size
//! (docs/capacity.md says why).

mod common;

use std::process::Command;

use common::whatif::{bracket_error_pct, check_pairs};

/// The CPU binds: pool(8) computing on one core -> loop-async, no gain.
const CPU_PAIR: &str = "presets/test/whatif-cpu.toml";

/// Threads bind: pool(4) -> loop-async.
const POOL_PAIR: &str = "presets/test/whatif-rust-pool.toml";

#[test]
fn the_cpu_pair_names_a_and_predicts_b_within_the_goal_and_the_noise() {
    check_pairs(&[CPU_PAIR]);
}

#[test]
#[ignore = "flaky at CI size: in 1 of 9 runs (ci10, 2026-11-27 09:05) A's copy, pool(4) serving sleep:42.9 alone at 93.8/s, read 0.892 ms a request where the other 8 read 0.26-0.53, so the handler read 1.35 ms (about 2.0) and B was predicted 700/s against 400-425 measured (+65% from the bracket); not yet known whether other work on the target's core or a copy counted steady too early. Run: cargo test -p iolab --test whatif -- --ignored"]
fn the_pool_pair_names_a_and_predicts_b_within_the_goal_and_the_noise() {
    check_pairs(&[POOL_PAIR]);
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
