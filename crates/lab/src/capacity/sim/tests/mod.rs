//! The search, the fit, the binding rules and the what-ifs on simulated
//! benches whose truth is known: a property over generated services
//! ([`property`]) and the real runs' regressions replayed ([`regressions`]).

mod property;
mod regressions;

use std::time::Duration;

use iolab_model::capacity::{Search as SearchRecord, Slo, StepRecord};
use iolab_model::ModelKind;
use iolab_predict::fit::{knobs, Network};

use super::{Dial, Service, SimBench};
use crate::capacity::{run, Options};

/// A search's settings for a service on `cores` cores: the defaults, steps
/// of at most 10 s (a simulated second costs as much as its requests).
fn options(cores: u32) -> Options {
    Options {
        max_step: Duration::from_secs(10),
        cores,
        sweep: None,
        ..Options::default()
    }
}

/// Search `service` under `slo` with `dial`'s noise: the search's record
/// and the bench it ran on.
fn search(
    service: &Service,
    dial: &Dial,
    slo: &Slo,
    timeout: Duration,
) -> (SearchRecord, SimBench) {
    let bench = SimBench::new(service.clone(), dial.clone(), timeout);
    let o = options(service.network.cores);
    let quiet = |_: &StepRecord| {};
    let record = run("sim", &bench, slo, &o, Vec::new(), &quiet);
    (record, bench)
}

/// `model(knobs)` running `steps` on `cores` cores.
fn net(model: ModelKind, pairs: &[(&str, u64)], steps: &str, cores: u32) -> Network {
    Network {
        model,
        params: knobs(pairs),
        steps: iolab_model::steps::parse(steps).expect("the test's steps parse"),
        cores,
        gil: false,
    }
}

/// `seq(cpu:T,pg:W,sleep:R)` of `cpu_ms` of CPU, `pg_ms` holding a
/// pooled connection and `sleep_ms` waiting, each part only when above 0.
fn work(cpu_ms: f64, pg_ms: f64, sleep_ms: f64) -> String {
    let terms = (cpu_ms * 1e6 / iolab_predict::calibration::NS_PER_TERM).round() as u64;
    let mut parts = Vec::new();
    if terms > 0 {
        parts.push(format!("cpu:{terms}"));
    }
    if pg_ms > 0.0 {
        parts.push(format!("pg:{:.3}", pg_ms));
    }
    if sleep_ms > 0.0 || parts.is_empty() {
        parts.push(format!("sleep:{:.3}", sleep_ms));
    }
    format!("seq({})", parts.join(","))
}
