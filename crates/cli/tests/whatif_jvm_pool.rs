//! `iolab whatif` end to end at CI size on the JVM pool pair
//! (presets/test/whatif-jvm-pool.toml: Spring MVC on 10 Tomcat threads,
//! virtual threads predicted and measured), with the same assertions as
//! every pair (`common::whatif`). Its own test binary, so that it never
//! loads the cores beside another pair.
//!
//! Ignored, for its time and its short record. It takes about five
//! minutes (two JVMs, each warmed; the test command's pairs already take
//! about 18), and it has passed three quiet runs only since A is held
//! again warm before its cost is read (-8.5%, -2.1%, -11.9% from B's
//! bracket; docs/capacity.md, the CI-size rows of the pair table). Before
//! that, A's cost was read in its own short search, still compiling, and
//! B was predicted -15% to -27% off; warmed less, B itself held 350-750/s.
//! A is named right since the fit reads the knee's own CPU (r31_11). Run
//! it with `cargo test -p iolab --test whatif_jvm_pool -- --ignored` on a
//! quiet machine, with the test command's services up.

mod common;

#[test]
#[ignore = "five minutes of two JVMs, three quiet passes so far (see the header)"]
fn the_jvm_pool_pair_names_a_and_predicts_b_within_the_goal_and_the_noise() {
    common::whatif::check_pairs(&["presets/test/whatif-jvm-pool.toml"]);
}
