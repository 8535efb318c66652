//! `iolab whatif` end to end at CI size, the pairs that need only the
//! built-in models (presets/test/whatif-{cpu,rust-pool}.toml: short steps,
//! small rates, a debug build's costs): A fitted as a black box must be
//! named by the resource its configuration sets, and each change B
//! predicted from that fit alone must land near B's measured capacity:
//! within the goal, 15%, and the noise of a CI-size measurement
//! (`common::whatif`). The pairs run in one test, one after the other: two
//! tests would load the same pinned cores at once. The slow tier
//! (`scripts/test --slow`): minutes of measuring. The runtime pairs are
//! `tests/whatif_runtimes.rs`, the JVM pairs among them
//! (docs/whatif.md says why).

mod common;

use common::whatif::{check_pairs, PairCheck, CI_NOISE_PCT};

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
