//! The queueing model read from a capacity curve: the service as a network
//! of resources a request holds in turn, named by its binding one.
//!
//! - **Service time S**: the median service time at the lowest rate that
//!   met the objective (the service unloaded).
//! - **Concurrency c at the knee**: Little's law at the capacity X:
//!   requests held at once = X x S.
//! - **CPU per request T** ([`cpu`]): the slope of the CPU busy (cores)
//!   against the rate answered, over the passing steps: of the cores the
//!   target is pinned to when they were its own (the kernel's softirq work
//!   for its packets included), else of its process tree (`/proc`).
//! - **The binding resource** ([`crate::binding`]): threads, workers, a
//!   pool, the CPU, an event loop blocked by its handlers, a downstream.
//!
//! The fitted service becomes a [`Network`]: the model whose hold matches
//! the binding resource, running `seq(cpu:T, pg:W, sleep:R)`: T of CPU, W
//! holding a pooled connection when a pool binds (W = pool / X, Little's
//! law on the pool; the simulation's `pg` step is its pooled call), R the
//! rest of S. `crate::whatif` changes one resource of it at a time.

use iolab_model::capacity::{Fit, Resource, StepRecord};
use iolab_model::concurrency::Host;
use iolab_model::{ModelKind, ModelParams, Step};

use crate::binding::{self, Knee};
use crate::calibration::NS_PER_TERM;

/// The service time of one request Little's law reads at the lowest rate
/// passed, ms: the median, or for a replayed mix the mean of its
/// endpoints' medians weighted by their requests. A mix's median is one
/// endpoint's: a mix of 16.5 ms mean (a trivial, a 50 ms and a 7 ms
/// endpoint) read 6.8 ms, and its pool of 4 was fitted as 2 (r53_3).
fn service_time(s: &StepRecord) -> f64 {
    let eps = &s.attack.endpoints;
    let sent: u64 = eps.iter().map(|e| e.sent).sum();
    match sent {
        0 => s.attack.service_ms.p50,
        n => {
            eps.iter()
                .map(|e| e.sent as f64 * e.latency_ms.p50)
                .sum::<f64>()
                / n as f64
        }
    }
}

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
    // Around the knee: the passes at its rate and the fails up to half
    // again above the first (a gauge full one step up, issue 50).
    let near: Vec<&StepRecord> = steps
        .iter()
        .filter(|s| {
            let top = over.map_or(capacity, |o| 1.5 * o.rate_rps);
            s.rate_rps >= at.rate_rps && s.rate_rps <= top
        })
        .collect();
    let service_ms = service_time(lowest);
    let concurrency = capacity * service_ms / 1000.0;
    let cores = cores.max(1);
    let cpu = cpu::per_request(&passing, cores);
    let cpu_ms = cpu.map(|c| c.ms);
    let binding = binding::name(&Knee {
        capacity,
        service_ms,
        concurrency,
        cpu_ms,
        cpu_method: cpu.map(|c| c.method),
        busy_at: cpu.and_then(|c| cpu::busy(at, c.source)),
        cores,
        at,
        over,
        near: &near,
    });
    let mut f = Fit {
        service_ms,
        concurrency,
        cpu_per_request_ms: cpu_ms,
        cpu_method: cpu.map(|c| c.method),
        cpu_source: cpu.map(|c| c.source),
        cpu_idle_cores: cpu.and_then(|c| c.idle_cores),
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
    costing(f, f.cpu_per_request_ms.unwrap_or(0.0))
}

/// The network a fit stands for, each request costing `cpu_ms` of CPU
/// instead of the fitted CPU (a calibrated change): the waits are the
/// fit's, S less the fitted CPU. A pool beside the binding resource (its
/// gauge below its max, or more connections than c) stays in it, so a
/// change that relieves the binding one meets the pool (issue 50: 80
/// Tomcat threads on a pool of 50 were predicted at 1,401/s, measured 960).
pub fn costing(f: &Fit, cpu_ms: f64) -> Network {
    let b = &f.binding;
    let size = b.size.unwrap_or(f.concurrency).round().max(1.0) as u64;
    let waited = waited_ms(f);
    let beside = |r: Resource| {
        b.also
            .iter()
            .filter(|l| l.resource == r && l.binds_at_rps.is_finite())
            .min_by(|x, y| x.binds_at_rps.total_cmp(&y.binds_at_rps))
    };
    let (pool, pool_ms) = match (b.resource, beside(Resource::Pool)) {
        (Resource::Pool, _) => (Some(size as u32), b.hold_ms.min(waited).max(0.0)),
        (_, Some(l)) => (
            Some(l.size.round().max(1.0) as u32),
            l.hold_ms.min(waited).max(0.0),
        ),
        _ => (None, 0.0),
    };
    let wait_ms = waited - pool_ms;
    let (model, mut params) = match b.resource {
        Resource::Threads | Resource::Downstream | Resource::Unknown => {
            (ModelKind::Pool, knobs(&[("threads", size)]))
        }
        Resource::Workers => (ModelKind::Prefork, knobs(&[("processes", size)])),
        // Threads as configured beside the pool hold it too.
        Resource::Pool => match beside(Resource::Threads).filter(|l| l.configured) {
            Some(t) => (
                ModelKind::Pool,
                knobs(&[("threads", t.size.round().max(1.0) as u64)]),
            ),
            None => (ModelKind::Virtual, ModelParams::default()),
        },
        Resource::Cpu => (ModelKind::LoopAsync, knobs(&[("workers", size)])),
        Resource::EventLoop => (
            ModelKind::LoopBlocking,
            knobs(&[("workers", 1), ("processes", 1)]),
        ),
    };
    params.pg_pool = pool;
    Network {
        model,
        params,
        steps: workload(cpu_ms.max(0.0), pool_ms, wait_ms),
        cores: f.cores,
        gil: false,
    }
}

/// What a request spends not computing, ms: the time it holds the binding
/// resource (S; a thread as configured is held size / X, Little's law on
/// the gauge, S less what was spent outside it) less the fitted CPU.
pub fn waited_ms(f: &Fit) -> f64 {
    let b = &f.binding;
    let held = match b.resource {
        Resource::Threads | Resource::Workers if b.configured && b.hold_ms > 0.0 => {
            b.hold_ms.min(f.service_ms)
        }
        _ => f.service_ms,
    };
    held - f.cpu_per_request_ms.unwrap_or(0.0).min(held)
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

pub mod cpu;
#[cfg(test)]
mod tests;
