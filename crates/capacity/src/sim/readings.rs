//! A simulated run read as a real step is read: the attack's counts and
//! latencies (what the load generator reports), the process tree's CPU
//! (its compiler threads' apart, as `telemetry/jit.rs` reads them), and
//! the signals `capacity/watch.rs` takes from `/proc` and the kernel:
//! threads by state, processes, the busiest thread, the run-queue wait,
//! the connections to the database. The binding rules read only these.

use std::collections::BTreeMap;
use std::time::Duration;

use iolab_model::attack::AttackResult;
use iolab_model::capacity::usl::SweepLevel;
use iolab_model::capacity::{
    Downstream, HotThread, Observed, SearchStage, Signals, Slo, StepRecord, ThreadState, Threads,
    Within,
};
use iolab_model::ModelKind;
use iolab_predict::sim::SimOutcome;

use super::Service;

/// Where a pooled `pg` step's connections go.
pub const DATABASE: &str = "127.0.0.1:5432";

/// What the bench had seen by the end of a step: a lazy pool keeps the
/// threads and connections it opened; a JIT compiling burns its cores.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    /// Most request threads busy at once, ever.
    pub threads: u64,
    /// Most pooled connections in use at once, ever.
    pub pg: u32,
    /// Cores the compiler threads burnt through the step, if compiling.
    pub jit_cores: Option<f64>,
}

/// The step asked for.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    /// Its objective.
    pub slo: &'a Slo,
    /// Offered rate, req/s.
    pub rate: f64,
    /// How long.
    pub duration: Duration,
    /// Part of the search.
    pub stage: SearchStage,
}

fn ms(out: &SimOutcome, q: f64) -> f64 {
    out.latency.quantile(q) as f64 / 1e3
}

/// The load generator's report of a run.
fn attack(out: &SimOutcome, rate: f64) -> AttackResult {
    let mut a = AttackResult::default();
    a.requests.planned = out.offered;
    a.requests.sent = out.offered;
    a.requests.ok = out.ok;
    a.elapsed_s = out.window_s;
    a.latency_ms.min = ms(out, 0.0);
    a.latency_ms.mean = out.latency.mean() / 1e3;
    a.latency_ms.p50 = ms(out, 0.5);
    a.latency_ms.p90 = ms(out, 0.9);
    a.latency_ms.p95 = ms(out, 0.95);
    a.latency_ms.p99 = ms(out, 0.99);
    a.latency_ms.p999 = ms(out, 0.999);
    a.latency_ms.max = ms(out, 1.0);
    // Sent on time: the service time is the latency.
    a.service_ms.p50 = a.latency_ms.p50;
    a.service_ms.p99 = a.latency_ms.p99;
    a.service_ms.max = a.latency_ms.max;
    a.throughput_rps.offered = rate;
    a.throughput_rps.achieved = out.throughput_rps();
    a.throughput_rps.goodput = out.goodput_rps();
    a
}

/// A step's record from its run, judged against the objective.
pub fn record(at: &At, out: &SimOutcome, service: &Service, seen: &Seen) -> StepRecord {
    let success = if out.offered == 0 {
        0.0
    } else {
        out.ok as f64 / out.offered as f64
    };
    let within = |ms: f64| out.latency.count_at_most((ms * 1000.0) as u64);
    let verdict = at.slo.judge(&Observed {
        planned: out.offered,
        success,
        answered_within: &within,
    });
    let a = attack(out, at.rate);
    let cpu = out.held.cpu + seen.jit_cores.unwrap_or(0.0);
    let answered = a.requests.answered();
    let metrics = super::series::scraped(out, service);
    // A remote service is seen only through the load and its own series.
    let seen_outside = StepRecord {
        rate_rps: at.rate,
        stage: Some(at.stage),
        duration_s: at.duration.as_secs_f64(),
        passed: verdict.is_ok(),
        verdict: verdict.map_or_else(|why| why, |()| format!("meets {}", at.slo)),
        success_ratio: success,
        goodput_rps: a.throughput_rps.goodput,
        p50_ms: a.latency_ms.p50,
        p99_ms: a.latency_ms.p99,
        in_flight: a.throughput_rps.achieved * a.latency_ms.mean / 1000.0,
        metrics,
        attack: a,
        ..StepRecord::default()
    };
    if service.remote {
        return seen_outside;
    }
    StepRecord {
        within: at
            .slo
            .bounds_ms()
            .into_iter()
            .map(|b| Within {
                below_ms: b,
                answered: within(b),
            })
            .collect(),
        cpu_cores: Some(cpu),
        compiler_cores: seen.jit_cores,
        cpu_per_request_ms: (answered > 0).then(|| cpu * out.window_s * 1000.0 / answered as f64),
        signals: Some(signals(out, service, seen)),
        ..seen_outside
    }
}

/// Threads that run handlers: the request threads, the workers, the loops.
fn handlers(service: &Service) -> f64 {
    let net = &service.network;
    let shape = net.model.shape(&net.params, &net.host());
    match (net.model, shape.request_threads) {
        (ModelKind::Virtual, _) => f64::from(net.cores),
        (_, Some(t)) if t.cap < u32::MAX => f64::from(t.cap),
        _ => f64::from(shape.fixed_threads.max(1)),
    }
}

/// Threads by state: on a CPU or waiting for one (R); parked on a lock
/// waiting for a pooled connection, or idle in the pool's queue (futex); in
/// the database call (socket); in the rest of the wait (sleep). Threads
/// that hold no request (`requests_hold_threads` false: loops, carriers)
/// idle in their poll.
fn states(
    out: &SimOutcome,
    threads: f64,
    requests_hold_threads: bool,
) -> BTreeMap<ThreadState, f64> {
    let h = out.held;
    let running = (h.cpu + h.cpu_waiting).min(threads);
    let mut states = BTreeMap::new();
    states.insert(ThreadState::Running, running);
    if requests_hold_threads {
        let sleeping = (h.threads - running - h.pg_waiting - h.pg).max(0.0);
        let held = running + h.pg_waiting + h.pg + sleeping;
        states.insert(ThreadState::Socket, h.pg);
        states.insert(ThreadState::Sleep, sleeping);
        states.insert(ThreadState::Futex, h.pg_waiting + (threads - held).max(0.0));
    } else {
        states.insert(ThreadState::Poll, (threads - running).max(0.0));
    }
    states.retain(|_, n| *n > 0.0);
    states
}

/// What `/proc` and the kernel would show of the service during `out`.
pub fn signals(out: &SimOutcome, service: &Service, seen: &Seen) -> Signals {
    let net = &service.network;
    let shape = net.model.shape(&net.params, &net.host());
    let serving = match net.model {
        ModelKind::Virtual => f64::from(net.cores),
        ModelKind::Prefork => f64::from(net.params.processes(net.cores)),
        _ => (seen.threads as f64).max(f64::from(shape.fixed_threads)),
    };
    let extra = f64::from(service.supervisors + service.other_threads);
    let threads = serving + extra + f64::from(shape.offload.unwrap_or(0).min(64));
    let processes = match net.model {
        ModelKind::Prefork => u64::from(net.params.processes(net.cores)),
        _ => 1,
    } + u64::from(service.supervisors);
    let states = states(out, threads, shape.request_threads.is_some());
    let h = out.held;
    let compiler = seen.jit_cores.unwrap_or(0.0);
    let handler = h.cpu / handlers(service);
    let hottest = if compiler > handler {
        HotThread {
            name: "C2 CompilerThre".into(),
            cores: compiler,
        }
    } else {
        HotThread {
            name: "handler".into(),
            cores: handler,
        }
    };
    let pooled = net.steps.to_string().contains("pg:");
    Signals {
        threads: Some(Threads {
            samples: 10,
            threads,
            processes,
            states,
            hottest: Some(hottest),
            cpu_wait: Some(h.cpu_waiting),
            cores_allowed: Some(net.cores),
        }),
        downstream: pooled
            .then(|| Downstream {
                endpoint: DATABASE.into(),
                connections: u64::from(seen.pg),
            })
            .into_iter()
            .collect(),
        accept_queue: None,
        inbound: None,
    }
}

/// A level of a closed-loop sweep from its run.
pub fn level(clients: u32, d: Duration, out: &SimOutcome) -> SweepLevel {
    SweepLevel {
        concurrency: clients,
        duration_s: d.as_secs_f64(),
        throughput_rps: out.goodput_rps(),
        success_ratio: if out.offered == 0 {
            0.0
        } else {
            out.ok as f64 / out.offered as f64
        },
        mean_ms: out.latency.mean() / 1e3,
        p50_ms: ms(out, 0.5),
        p99_ms: ms(out, 0.99),
        usl_rps: None,
        queueing_rps: None,
    }
}
