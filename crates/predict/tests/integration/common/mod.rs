//! Builders shared by the simulation tests.
#![allow(dead_code)]

use std::time::Duration;

use iolab_model::driver::{Arrival, ConnectionMode, Driver, Phase};
use iolab_model::experiment::HttpWork;
use iolab_model::predict::Prediction;
use iolab_model::runtime::Runtime;
use iolab_model::{ModelKind, ModelParams};
use iolab_predict::predict_http;
use iolab_predict::sim::{simulate, Scheduler, SimInput, SimOutcome};

pub const KEEP: ConnectionMode = ConnectionMode::KeepAlive { max: 100_000 };
pub const FRESH: ConnectionMode = ConnectionMode::NewPerRequest { max: 100_000 };

pub fn open(rate: f64, secs: f64) -> Driver {
    Driver::constant(rate, Duration::from_secs_f64(secs))
}

pub fn poisson(rate: f64, secs: f64, seed: u64) -> Driver {
    Driver::Open {
        phases: vec![Phase::hold(rate, Duration::from_secs_f64(secs))],
        arrival: Arrival::Poisson { seed },
    }
}

pub fn closed(clients: u32, secs: f64) -> Driver {
    Driver::Closed {
        concurrency: clients,
        requests: None,
        duration: Some(Duration::from_secs_f64(secs)),
    }
}

pub fn work(steps: &str, driver: Driver, conn: ConnectionMode, timeout_s: f64) -> HttpWork {
    HttpWork {
        steps: iolab_model::steps::parse(steps).expect("steps"),
        driver,
        connections: conn,
        timeout: Duration::from_secs_f64(timeout_s),
        interval: Duration::from_secs(1),
        command: None,
        body: Default::default(),
        foreign: None,
        held: None,
    }
}

pub fn pool(threads: u32) -> ModelParams {
    ModelParams {
        threads: Some(threads),
        ..Default::default()
    }
}

/// Simulate and check the accounting invariant on the way.
pub fn sim(model: ModelKind, params: &ModelParams, w: &HttpWork, cores: u32) -> SimOutcome {
    let shape = model.shape(params, &cores.into());
    let out = simulate(&SimInput {
        shape: &shape,
        steps: &w.steps,
        driver: &w.driver,
        connections: w.connections,
        timeout: w.timeout,
        pg_pool: params.pg_pool(),
        scheduler: Scheduler::of(model, params, &Runtime::rust()),
        noise: None,
    });
    let failed: u64 = out.errors.values().sum();
    assert_eq!(
        out.ok + failed,
        out.offered,
        "every request accounted for: {out:?}"
    );
    out
}

pub fn predict(model: ModelKind, params: &ModelParams, w: &HttpWork, cores: u32) -> Prediction {
    let p = predict_http(model, params, w, cores);
    let failed: u64 = p.errors.values().sum();
    assert_eq!(
        p.ok + failed,
        p.offered,
        "every request accounted for: {p:?}"
    );
    p
}

/// |a - b| <= tol * |b|
pub fn near(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs()
}
