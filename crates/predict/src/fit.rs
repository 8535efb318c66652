//! The queueing model read from a capacity curve, and what each concurrency
//! model would do with the service so fitted.
//!
//! - **Service time S**: the median service time at the lowest rate that
//!   met the objective (the service unloaded).
//! - **Concurrency c at the knee**: Little's law at the capacity X:
//!   requests held at once = X x S.
//! - **CPU per request**: the target's CPU (its processes, from `/proc`)
//!   over the requests it answered, the median over passing steps.
//! - **The limit**: the CPU when the CPU busy at capacity (X x CPU per
//!   request) is at least half a core *and* at least half of the
//!   requests held are computing (X x CPU >= c / 2): requests are held
//!   mostly while they compute, so only more cores would help. Otherwise
//!   a fixed number of requests at a time (threads, workers, a pool).
//!
//! The fitted service becomes a workload `seq(cpu:T,sleep:W)` (T Leibniz
//! terms for the CPU per request at [`NS_PER_TERM`], W the rest of S) on
//! the model it behaves like (`pool(threads=c)` or `loop-async` on the
//! cores it used), and the same workload is simulated on other models at
//! the measured rates ([`what_if`]).

use std::time::Duration;

use iolab_model::capacity::{Fit, Limit, StepRecord, WhatIf, WhatIfPoint};
use iolab_model::concurrency::Host;
use iolab_model::driver::{ConnectionMode, Driver};
use iolab_model::experiment::HttpWork;
use iolab_model::{ModelKind, ModelParams, Step};

use crate::calibration::NS_PER_TERM;

/// Read the model from the steps of a search that found `capacity` req/s,
/// on a host of `cores` cores; `None` without a passing step.
pub fn fit(steps: &[StepRecord], capacity: f64, cores: u32) -> Option<Fit> {
    let passing: Vec<&StepRecord> = steps.iter().filter(|s| s.passed).collect();
    let lowest = passing
        .iter()
        .min_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps))?;
    let service_ms = lowest.attack.service_ms.p50;
    let concurrency = capacity * service_ms / 1000.0;
    let cpu_ms = median(passing.iter().filter_map(|s| s.cpu_per_request_ms));
    let busy = cpu_ms.map(|c| capacity * c / 1000.0);
    let limit = match busy {
        Some(b) if b >= 0.5 && b >= concurrency / 2.0 => Limit::Cpu,
        _ => Limit::Concurrency,
    };
    let cores = cores.max(1);
    let cpu_capacity_rps = cpu_ms
        .filter(|c| *c > 0.0)
        .map(|c| f64::from(cores) * 1000.0 / c);
    let (model, params) = fitted_model(limit, concurrency, busy);
    let mut f = Fit {
        service_ms,
        concurrency,
        cpu_per_request_ms: cpu_ms,
        cpu_cores_at_capacity: busy,
        limit,
        cpu_capacity_rps,
        cores,
        steps: workload(service_ms, cpu_ms).to_string(),
        model: label(model, &params),
        sentence: String::new(),
    };
    f.sentence = sentence(&f, capacity);
    Some(f)
}

/// The model and knobs the fitted service behaves like.
fn fitted_model(limit: Limit, concurrency: f64, busy: Option<f64>) -> (ModelKind, ModelParams) {
    let mut p = ModelParams::default();
    match limit {
        Limit::Concurrency => {
            let _ = p.set("threads", concurrency.round().max(1.0) as u64);
            (ModelKind::Pool, p)
        }
        Limit::Cpu => {
            let k = busy.unwrap_or(1.0).round().max(1.0) as u64;
            let _ = p.set("workers", k);
            (ModelKind::LoopAsync, p)
        }
    }
}

fn label(model: ModelKind, params: &ModelParams) -> String {
    format!("{}({})", model, params.label())
}

/// `seq(cpu:T,sleep:W)`: the CPU per request as Leibniz terms, the rest of
/// the service time as a wait.
fn workload(service_ms: f64, cpu_ms: Option<f64>) -> Step {
    let cpu_ms = cpu_ms.unwrap_or(0.0).min(service_ms);
    let terms = (cpu_ms * 1e6 / NS_PER_TERM).round() as u64;
    let wait_us = ((service_ms - cpu_ms) * 1000.0).round().max(0.0) as u64;
    let mut parts = Vec::new();
    if terms > 0 {
        parts.push(format!("cpu:{terms}"));
    }
    if wait_us > 0 || parts.is_empty() {
        parts.push(format!("sleep:{}", wait_us as f64 / 1000.0));
    }
    let text = match parts.as_slice() {
        [one] => one.clone(),
        _ => format!("seq({})", parts.join(",")),
    };
    iolab_model::steps::parse(&text).unwrap_or(Step::Cpu { terms: 0 })
}

fn median(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 10.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

/// One sentence naming the limit, e.g. "behaves like a pool of about 4
/// threads, each held 50 ms: capacity about 80 req/s; CPU would allow
/// about 2,000 req/s on 2 cores".
fn sentence(f: &Fit, capacity: f64) -> String {
    let cpu = match (f.cpu_capacity_rps, f.cpu_per_request_ms) {
        (Some(r), Some(c)) => format!(
            "CPU ({} per request) would allow about {:.0} req/s on {} cores",
            ms(c),
            r,
            f.cores
        ),
        _ => "its CPU was not measured (no PID: start it from iolab or give pid = N)".into(),
    };
    match f.limit {
        Limit::Concurrency => format!(
            "behaves like a pool of about {:.0} threads (or workers), each held {}: capacity about {:.0} req/s; {cpu}",
            f.concurrency.max(1.0),
            ms(f.service_ms),
            capacity
        ),
        Limit::Cpu => format!(
            "is limited by CPU: {:.2} cores busy at its capacity of about {:.0} req/s, {} of CPU per request; more threads would not help, more cores (processes) would",
            f.cpu_cores_at_capacity.unwrap_or(0.0),
            capacity,
            ms(f.cpu_per_request_ms.unwrap_or(0.0))
        ),
    }
}

/// A measured rate and how long it was held.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Offered rate, req/s.
    pub rps: f64,
    /// Step length.
    pub duration: Duration,
}

/// The fitted service on each model, simulated at `rates` with the search's
/// `timeout`: the fitted model first, then a pool twice its size, a thread
/// per request, and a non-blocking loop on every core.
pub fn what_if(fit: &Fit, rates: &[Rate], timeout: Duration) -> Vec<WhatIf> {
    let steps: Step = match iolab_model::steps::parse(&fit.steps) {
        Ok(s) => s,
        Err(_) => return Vec::new(),
    };
    let (fitted, fitted_params) =
        fitted_model(fit.limit, fit.concurrency, fit.cpu_cores_at_capacity);
    let c = fit.concurrency.round().max(1.0) as u64;
    let mut models = vec![(fitted, fitted_params.clone(), true)];
    let mut twice = ModelParams::default();
    let _ = twice.set("threads", (c * 2).min(10_000));
    models.push((ModelKind::Pool, twice, false));
    models.push((ModelKind::ThreadPerRequest, ModelParams::default(), false));
    let mut all_cores = ModelParams::default();
    let _ = all_cores.set("workers", u64::from(fit.cores));
    if !(fitted == ModelKind::LoopAsync && fitted_params == all_cores) {
        models.push((ModelKind::LoopAsync, all_cores, false));
    }
    let host = Host::cores(fit.cores);
    models
        .into_iter()
        .map(|(model, params, is_fitted)| {
            let points: Vec<(WhatIfPoint, Option<f64>)> = rates
                .iter()
                .map(|r| {
                    let work = HttpWork {
                        steps: steps.clone(),
                        driver: Driver::constant(r.rps, r.duration),
                        connections: ConnectionMode::default(),
                        timeout,
                        interval: Duration::from_secs(1),
                        command: None,
                        body: Default::default(),
                        foreign: None,
                    };
                    let p = crate::predict_http(model, &params, &work, host);
                    (
                        WhatIfPoint {
                            rate_rps: r.rps,
                            success_ratio: p.success_ratio,
                            p50_ms: p.latency_ms.p50,
                            p99_ms: p.latency_ms.p99,
                        },
                        p.capacity_rps,
                    )
                })
                .collect();
            WhatIf {
                label: label(model, &params),
                model: model.as_str().to_string(),
                fitted: is_fitted,
                capacity_rps: points.iter().find_map(|(_, c)| *c),
                points: points.into_iter().map(|(p, _)| p).collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_model::attack::AttackResult;

    fn step(rate: f64, passed: bool, service_ms: f64, cpu_ms: Option<f64>) -> StepRecord {
        let mut attack = AttackResult::default();
        attack.service_ms.p50 = service_ms;
        StepRecord {
            rate_rps: rate,
            passed,
            cpu_per_request_ms: cpu_ms,
            attack,
            ..StepRecord::default()
        }
    }

    #[test]
    fn a_sleeping_pool_is_limited_by_its_workers() {
        // 4 workers x 50 ms: capacity 80 req/s; 1 ms CPU per request.
        let steps = [
            step(10.0, true, 50.0, Some(1.0)),
            step(40.0, true, 51.0, Some(1.0)),
            step(80.0, true, 55.0, Some(1.0)),
            step(160.0, false, 900.0, Some(1.0)),
        ];
        let f = fit(&steps, 80.0, 2).unwrap();
        assert_eq!(f.limit, Limit::Concurrency);
        assert!((f.concurrency - 4.0).abs() < 0.01, "{f:?}");
        assert_eq!(f.model, "pool(threads=4)");
        assert_eq!(f.steps, "seq(cpu:909091,sleep:49)");
        assert!(
            f.sentence.contains("pool of about 4 threads"),
            "{}",
            f.sentence
        );
        assert!(
            f.sentence.contains("about 2000 req/s on 2 cores"),
            "{}",
            f.sentence
        );
        let rates = [80.0, 160.0].map(|rps| Rate {
            rps,
            duration: Duration::from_secs(2),
        });
        let w = what_if(&f, &rates, Duration::from_millis(500));
        assert!(w[0].fitted && w[0].label == "pool(threads=4)");
        let cap = w[0].capacity_rps.unwrap();
        assert!((cap - 80.0).abs() < 2.0, "{cap}");
        // The fitted pool fails at twice its capacity; a pool twice as big holds.
        assert!(w[0].points[1].success_ratio < 0.9, "{:?}", w[0].points);
        assert!(w[1].points[1].success_ratio > 0.99, "{:?}", w[1].points);
    }

    #[test]
    fn a_computing_loop_is_limited_by_cpu() {
        // One core, 5 ms of CPU each: capacity 200 req/s.
        let steps = [
            step(50.0, true, 5.2, Some(5.0)),
            step(200.0, true, 6.0, Some(4.9)),
            step(400.0, false, 300.0, Some(4.8)),
        ];
        let f = fit(&steps, 200.0, 2).unwrap();
        assert_eq!(f.limit, Limit::Cpu, "{f:?}");
        assert_eq!(f.model, "loop-async(workers=1)");
        assert!(f.sentence.contains("limited by CPU"), "{}", f.sentence);
        assert!(fit(&[step(10.0, false, 1.0, None)], 1.0, 2).is_none());
        let f = fit(&steps[..1], 50.0, 2).unwrap();
        assert!(f.cpu_capacity_rps.is_some());
    }
}
