//! Helpers shared by the loadgen tests: plans and a real server.
#![allow(dead_code)]

pub mod echo;
pub mod odd;
pub mod server;

use std::time::Duration;

use iolab_loadgen::{attack, AttackReport, Hooks};
use iolab_model::attack::AttackPlan;
use iolab_model::driver::Driver;

/// An open loop at `rate` for `secs` against `url`, two threads.
pub fn open(url: &str, rate: f64, secs: f64) -> AttackPlan {
    AttackPlan {
        timeout: Duration::from_secs(2),
        interval: Duration::from_millis(250),
        threads: Some(2),
        ..AttackPlan::new(url, Driver::constant(rate, Duration::from_secs_f64(secs)))
    }
}

/// Run a plan and check the accounting invariants.
pub fn run(plan: &AttackPlan) -> AttackReport {
    let report = attack(plan, &Hooks::default()).expect("attack runs");
    report.result.check_accounting().expect("accounting holds");
    report
}

/// A port nothing listens on (bound, read, released).
pub fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}
