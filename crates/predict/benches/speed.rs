//! Speed of the simulation: a 60 s run at 100,000 req/s must simulate in
//! under 5 s (release). Prints a table; also re-measures the Leibniz cost
//! behind `calibration::NS_PER_TERM`.
//!
//! `cargo bench -p iolab-predict --bench speed` (or `scripts/bench-predict`).

use std::time::{Duration, Instant};

use iolab_model::driver::{ConnectionMode, Driver};
use iolab_model::experiment::HttpWork;
use iolab_model::runtime::Runtime;
use iolab_model::{ModelKind, ModelParams};
use iolab_predict::sim::{simulate, Scheduler, SimInput};

fn work(steps: &str, rate: f64, secs: u64, conn: ConnectionMode) -> HttpWork {
    HttpWork {
        steps: iolab_model::steps::parse(steps).expect("steps"),
        driver: Driver::constant(rate, Duration::from_secs(secs)),
        connections: conn,
        timeout: Duration::from_secs(10),
        interval: Duration::from_secs(1),
        command: None,
        body: Default::default(),
        foreign: None,
        held: None,
    }
}

fn main() {
    let cases: Vec<(&str, ModelKind, ModelParams, HttpWork)> = vec![
        (
            "loop-async sleep:1000 100k/s 60s",
            ModelKind::LoopAsync,
            ModelParams::default(),
            work(
                "sleep:1000",
                100_000.0,
                60,
                ConnectionMode::KeepAlive { max: 1_000_000 },
            ),
        ),
        (
            "loop-async par(3 calls)+cpu 100k/s 60s",
            ModelKind::LoopAsync,
            ModelParams::default(),
            work(
                "par(sleep:200,sleep:500,sleep:300),cpu:1000",
                100_000.0,
                60,
                ConnectionMode::KeepAlive { max: 1_000_000 },
            ),
        ),
        (
            "pool 200 sleep:1000 100k/s 60s (overload)",
            ModelKind::Pool,
            ModelParams::default(),
            work(
                "sleep:1000",
                100_000.0,
                60,
                ConnectionMode::NewPerRequest { max: 1_000_000 },
            ),
        ),
        (
            "pool 2000 sleep:10 100k/s 60s",
            ModelKind::Pool,
            ModelParams {
                threads: Some(2_000),
                ..Default::default()
            },
            work(
                "sleep:10",
                100_000.0,
                60,
                ConnectionMode::KeepAlive { max: 10_000 },
            ),
        ),
        (
            "loop-offload 64 sleep:1 1M/s 10s",
            ModelKind::LoopOffload,
            ModelParams::default(),
            work(
                "sleep:1",
                1_000_000.0,
                10,
                ConnectionMode::KeepAlive { max: 1_000_000 },
            ),
        ),
    ];
    println!(
        "{:<42} {:>10} {:>10} {:>11} {:>9} {:>6}",
        "case", "offered", "ok", "events", "time", "<5s"
    );
    for (name, model, params, w) in cases {
        let t = Instant::now();
        let shape = model.shape(&params, &2.into());
        let p = simulate(&SimInput {
            shape: &shape,
            steps: &w.steps,
            driver: &w.driver,
            connections: w.connections,
            timeout: w.timeout,
            pg_pool: params.pg_pool(),
            scheduler: Scheduler::of(model, &params, &Runtime::rust()),
            noise: None,
        });
        let el = t.elapsed().as_secs_f64();
        println!(
            "{:<42} {:>10} {:>10} {:>11} {:>8.2}s {:>6}",
            name,
            p.offered,
            p.ok,
            p.events,
            el,
            if el < 5.0 { "yes" } else { "NO" }
        );
    }
    let terms = 300_000_000u64;
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        iolab_model::cpu::leibniz(terms);
        best = best.min(t.elapsed().as_secs_f64() * 1e9 / terms as f64);
    }
    println!(
        "leibniz: {best:.2} ns/term measured now (best of 3); calibration::NS_PER_TERM = {}",
        iolab_predict::calibration::NS_PER_TERM
    );
}
