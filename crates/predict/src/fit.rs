//! The queueing model read from a capacity curve: the service as a network
//! of resources a request holds in turn, named by its binding one.
//!
//! - **Service time S**: the median service time at the lowest rate that
//!   met the objective (the service unloaded).
//! - **Concurrency c at the knee**: Little's law at the capacity X:
//!   requests held at once = X x S.
//! - **CPU per request T**: the slope of the target's CPU (cores, from
//!   `/proc`) against the rate it answered, over the passing steps: what
//!   one more request costs, without the CPU it burns idle (JIT, GC, a
//!   metrics thread), which a median of CPU over requests would spread
//!   over the few requests of the light steps. With fewer than two rates
//!   apart, the median of CPU over requests.
//! - **The binding resource** ([`crate::binding`]): threads, workers, a
//!   pool, the CPU, an event loop blocked by its handlers, a downstream.
//!
//! The fitted service becomes a [`Network`]: the model whose hold matches
//! the binding resource, running `seq(cpu:T, pg:W, sleep:R)`: T of CPU, W
//! holding a pooled connection when a pool binds (W = pool / X, Little's
//! law on the pool; the simulation's `pg` step is its pooled call), R the
//! rest of S. `crate::whatif` changes one resource of it at a time.

use iolab_model::capacity::{CpuMethod, Fit, Resource, StepRecord};
use iolab_model::concurrency::Host;
use iolab_model::{ModelKind, ModelParams, Step};

use crate::binding::{self, Knee};
use crate::calibration::NS_PER_TERM;

/// Read the model from the steps of a search that found `capacity` req/s,
/// on a host of `cores` cores; `None` without a passing step.
pub fn fit(steps: &[StepRecord], capacity: f64, cores: u32) -> Option<Fit> {
    let passing: Vec<&StepRecord> = steps.iter().filter(|s| s.passed).collect();
    let lowest = passing
        .iter()
        .min_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps))?;
    let at = passing
        .iter()
        .filter(|s| s.rate_rps <= capacity)
        .max_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps))
        .unwrap_or(lowest);
    let over = steps
        .iter()
        .filter(|s| !s.passed && s.rate_rps > capacity)
        .min_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps));
    let service_ms = lowest.attack.service_ms.p50;
    let concurrency = capacity * service_ms / 1000.0;
    let cpu = cpu_per_request(&passing);
    let cores = cores.max(1);
    let cpu_ms = cpu.map(|c| c.0);
    let binding = binding::name(&Knee {
        capacity,
        service_ms,
        concurrency,
        cpu_ms,
        cores,
        at,
        over,
    });
    let mut f = Fit {
        service_ms,
        concurrency,
        cpu_per_request_ms: cpu_ms,
        cpu_method: cpu.map(|c| c.2),
        cpu_idle_cores: cpu.and_then(|c| c.1),
        cpu_cores_at_capacity: cpu_ms.map(|c| capacity * c / 1000.0),
        cpu_capacity_rps: cpu_ms
            .filter(|c| *c > 0.0)
            .map(|c| f64::from(cores) * 1000.0 / c),
        cores,
        binding,
        steps: String::new(),
        model: String::new(),
    };
    let net = network(&f);
    f.steps = net.steps.to_string();
    f.model = net.label();
    Some(f)
}

/// CPU per request, ms; the idle CPU, cores (the slope's intercept); how.
fn cpu_per_request(passing: &[&StepRecord]) -> Option<(f64, Option<f64>, CpuMethod)> {
    let points: Vec<(f64, f64)> = passing
        .iter()
        .filter_map(|s| {
            let answered = (s.attack.requests.ok + s.attack.requests.non_2xx) as f64;
            let rate = answered / s.attack.elapsed_s.max(1e-3);
            Some((rate, s.cpu_cores?))
        })
        .filter(|(r, c)| r.is_finite() && c.is_finite() && *r > 0.0)
        .collect();
    let lo = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let hi = points.iter().map(|p| p.0).fold(0.0, f64::max);
    if points.len() >= 2 && hi >= 1.5 * lo {
        let (slope, intercept) = least_squares(&points);
        if slope > 0.0 {
            return Some((slope * 1000.0, Some(intercept), CpuMethod::Slope));
        }
    }
    median(passing.iter().filter_map(|s| s.cpu_per_request_ms))
        .map(|m| (m, None, CpuMethod::Median))
}

/// y = a + b x by least squares: (b, a).
fn least_squares(p: &[(f64, f64)]) -> (f64, f64) {
    let n = p.len() as f64;
    let mx = p.iter().map(|q| q.0).sum::<f64>() / n;
    let my = p.iter().map(|q| q.1).sum::<f64>() / n;
    let sxy: f64 = p.iter().map(|q| (q.0 - mx) * (q.1 - my)).sum();
    let sxx: f64 = p.iter().map(|q| (q.0 - mx).powi(2)).sum();
    let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (b, my - b * mx)
}

fn median(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// The fitted service as the simulation runs it: a model (what holds a
/// request), its knobs (the pool it waits for among them), the work of one
/// request, the cores.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    /// The model whose hold is the binding resource's.
    pub model: ModelKind,
    /// Its knobs; `pg_pool` is the pool a request waits for.
    pub params: ModelParams,
    /// One request's work.
    pub steps: Step,
    /// Cores.
    pub cores: u32,
    /// One interpreter lock per process (a CPython runtime's).
    pub gil: bool,
}

impl Network {
    /// `pool(threads=4)`, with the pool when one binds.
    pub fn label(&self) -> String {
        format!("{}({})", self.model, self.params.label())
    }

    /// The host it runs on.
    pub fn host(&self) -> Host {
        Host {
            cores: self.cores,
            gil: self.gil,
        }
    }

    /// The same service on another model with other knobs (the pool kept
    /// unless `params` sets one).
    pub fn on(&self, model: ModelKind, mut params: ModelParams, cores: u32) -> Network {
        if params.pg_pool.is_none() {
            params.pg_pool = self.params.pg_pool;
        }
        Network {
            model,
            params,
            steps: self.steps.clone(),
            cores,
            gil: self.gil,
        }
    }

    /// The same on a host with (or without) an interpreter lock.
    pub fn with_gil(self, gil: bool) -> Network {
        Network { gil, ..self }
    }
}

/// Knobs from `(name, value)` pairs of the one knob table.
pub fn knobs(pairs: &[(&str, u64)]) -> ModelParams {
    let mut p = ModelParams::default();
    for (k, v) in pairs {
        let _ = p.set(k, *v);
    }
    p
}

/// The network a fit stands for (the same for the same fit).
pub fn network(f: &Fit) -> Network {
    let b = &f.binding;
    let size = b.size.unwrap_or(f.concurrency).round().max(1.0) as u64;
    let cpu_ms = f.cpu_per_request_ms.unwrap_or(0.0).min(f.service_ms);
    let pool_ms = match b.resource {
        Resource::Pool => b.hold_ms.min(f.service_ms - cpu_ms).max(0.0),
        _ => 0.0,
    };
    let (model, params) = match b.resource {
        Resource::Threads | Resource::Downstream | Resource::Unknown => {
            (ModelKind::Pool, knobs(&[("threads", size)]))
        }
        Resource::Workers => (ModelKind::Prefork, knobs(&[("processes", size)])),
        Resource::Pool => (ModelKind::Virtual, knobs(&[("pg_pool", size)])),
        Resource::Cpu => (ModelKind::LoopAsync, knobs(&[("workers", size)])),
        Resource::EventLoop => (
            ModelKind::LoopBlocking,
            knobs(&[("workers", 1), ("processes", 1)]),
        ),
    };
    Network {
        model,
        params,
        steps: workload(cpu_ms, pool_ms, f.service_ms - cpu_ms - pool_ms),
        cores: f.cores,
        gil: false,
    }
}

/// `seq(cpu:T,pg:W,sleep:R)`, each part only when above zero.
fn workload(cpu_ms: f64, pool_ms: f64, rest_ms: f64) -> Step {
    let terms = (cpu_ms * 1e6 / NS_PER_TERM).round() as u64;
    let us = |ms: f64| (ms * 1000.0).round().max(0.0) as u64;
    let mut parts = Vec::new();
    if terms > 0 {
        parts.push(format!("cpu:{terms}"));
    }
    if us(pool_ms) > 0 {
        parts.push(format!("pg:{}", us(pool_ms) as f64 / 1000.0));
    }
    if us(rest_ms) > 0 || parts.is_empty() {
        parts.push(format!("sleep:{}", us(rest_ms) as f64 / 1000.0));
    }
    let text = match parts.as_slice() {
        [one] => one.clone(),
        _ => format!("seq({})", parts.join(",")),
    };
    iolab_model::steps::parse(&text).unwrap_or(Step::Cpu { terms: 0 })
}

#[cfg(test)]
mod tests;
