//! `iolab whatif` end to end at CI size on the runtime pairs
//! (presets/test/whatif-{python-prefork,node-loop-blocking,ruby-sequential,
//! jvm-pool,jvm-pg-pool}.toml: the full presets' pairs with short steps, and rates a
//! debug build's generator keeps up with), with the same assertions as the
//! built-in pairs (`common::whatif`): A named by the resource its
//! configuration sets, each B near its measured capacity
//! (the goal, 15%, and the noise of a CI-size measurement of such a B:
//! Spring's on one CPU moves most). The
//! runtimes are built and PostgreSQL started by the test command's install
//! step and services (scripts/test); without them this fails, naming what
//! is missing.

mod common;

use common::whatif::{PairCheck, CI_NOISE_PCT, JVM_CI_NOISE_PCT};

/// gunicorn (workers) -> uvicorn; Node's blocked loop -> offload to 4
/// worker_threads; Thin blocking on its reactor -> async on EventMachine;
/// Spring MVC on 10 Tomcat threads -> virtual threads and WebFlux; Spring limited by
/// HikariCP's 10 connections -> WebFlux + R2DBC (no gain).
const PAIRS: [PairCheck; 5] = [
    ("presets/test/whatif-python-prefork.toml", CI_NOISE_PCT),
    ("presets/test/whatif-node-loop-blocking.toml", CI_NOISE_PCT),
    ("presets/test/whatif-ruby-sequential.toml", CI_NOISE_PCT),
    ("presets/test/whatif-jvm-pool.toml", JVM_CI_NOISE_PCT),
    ("presets/test/whatif-jvm-pg-pool.toml", CI_NOISE_PCT),
];

#[test]
fn every_runtime_pair_names_a_and_predicts_b_within_the_goal_and_the_noise() {
    common::whatif::check_pairs(&PAIRS);
}
