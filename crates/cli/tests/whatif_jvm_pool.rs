//! `iolab whatif` end to end at CI size on the JVM pool pair
//! (presets/test/whatif-jvm-pool.toml: Spring MVC on 10 Tomcat threads,
//! virtual threads predicted and measured), with the same assertions as
//! every pair (`common::whatif`). Its own test binary, so that it never
//! loads the cores beside another pair.
//!
//! Ignored: the prediction moves with how warm the JVMs are. B, warmed
//! before its search by at least the JVM's 20,000 requests, held 700/s and
//! 650/s, and was predicted at 595 and 472 (-15.0% and -27.4% from its
//! bracket): A and the lab's copies, read after A's own short search, are
//! less warm. Warmed less, B held 350-700/s over four runs, the
//! predictions +44%, +1%, 0% and +42% from it (docs/capacity.md, the
//! CI-size rows of the pair table). A is named right since the fit reads
//! the knee's own CPU (r31_11). Run it with `cargo test -p iolab --test
//! whatif_jvm_pool -- --ignored` on a quiet machine, with the test
//! command's services up.

mod common;

#[test]
#[ignore = "the JVMs' warm state moves the prediction by -27% to +44% (see the header)"]
fn the_jvm_pool_pair_names_a_and_predicts_b_within_the_goal_and_the_noise() {
    common::whatif::check_pairs(&["presets/test/whatif-jvm-pool.toml"]);
}
