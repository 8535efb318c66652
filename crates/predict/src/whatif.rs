//! What a change would buy: the fitted [`Network`] with one resource
//! changed, simulated at the measured rates and searched for its capacity
//! under the same objective (the same ramp-and-bisect a measured search
//! does, on the simulation, with steps as long as the measured ones).
//!
//! [`changes`] lists the changes that matter for the resource that binds
//! (more threads or workers, a bigger pool, more cores, a non-blocking
//! model, virtual threads, an offload pool); a runtime's own changes with
//! its defaults are built by the lab from its manifest and simulated here
//! the same way ([`simulate`]).

use std::time::Duration;

use iolab_model::capacity::{Fit, Resource, Slo, WhatIf, WhatIfPoint};
use iolab_model::driver::{ConnectionMode, Driver};
use iolab_model::experiment::HttpWork;
use iolab_model::runtime::Runtime;

use crate::fit::{network, Network};
use crate::sim::{simulate as run_sim, Scheduler, SimInput, SimOutcome};

mod rows;

use rows::{for_cpu, for_event_loop, for_pool, for_threads, for_workers, Sizes, Words};

/// A change a team can make, and the network it gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The change in words, e.g. `twice the threads (400)`.
    pub change: String,
    /// The network after it.
    pub network: Network,
    /// The network as fitted (no change).
    pub fitted: bool,
    /// The runtime that would serve it (its scheduler's order).
    pub runtime: Runtime,
    /// Why no number can be given for it, and what would settle it (the
    /// change touches a resource no signal named).
    pub cannot_say: Option<String>,
}

/// The measured rates a what-if replays, and how long each step lasted.
#[derive(Debug, Clone)]
pub struct Replay<'a> {
    /// Distinct rates measured, lowest first.
    pub rates: &'a [f64],
    /// Step length (the longest one measured near the knee).
    pub step: Duration,
    /// The client timeout.
    pub timeout: Duration,
    /// The objective.
    pub slo: &'a Slo,
}

/// A service iolab did not start: no scheduler of its own is assumed.
pub fn foreign() -> Runtime {
    Runtime::named("foreign").expect("a valid name")
}

/// The changes that matter for the resource `f` names, the fitted network
/// first, each in the words of the runtime its series show (its own knob
/// with its size as configured, when read).
pub fn changes(f: &Fit) -> Vec<Change> {
    let net = network(f);
    let sizes = Sizes {
        size: f.binding.size.unwrap_or(f.concurrency).round().max(1.0) as u64,
        held: f.concurrency,
        cores: f.cores,
    };
    let w = Words::of(f);
    let alternatives = match f.binding.resource {
        Resource::Threads | Resource::Downstream | Resource::Unknown => {
            for_threads(&net, &sizes, &w)
        }
        Resource::Workers => for_workers(&net, &sizes, &w),
        Resource::Pool => for_pool(&net, &sizes, &w),
        Resource::Cpu => for_cpu(&net, &sizes),
        Resource::EventLoop => for_event_loop(&net, &sizes),
    };
    let unsure = cannot_say(f);
    let fitted = Change {
        change: "as fitted".into(),
        network: net,
        fitted: true,
        runtime: foreign(),
        cannot_say: None,
    };
    std::iter::once(fitted)
        .chain(alternatives.into_iter().map(|(change, network)| Change {
            change,
            network,
            fitted: false,
            runtime: foreign(),
            cannot_say: unsure.clone(),
        }))
        .collect()
}

/// Why no change can be predicted for `f`: no signal named what binds (it
/// is unknown, or named by Little's law alone with nothing from `/proc`,
/// the kernel or the service's own series), so any change touches a
/// candidate, and a number would promise what the evidence cannot (issue
/// 50: a remote pool of 10 predicted at 7,733/s on virtual threads).
pub fn cannot_say(f: &Fit) -> Option<String> {
    use iolab_model::capacity::{Confidence, Source};
    let b = &f.binding;
    let seen = b.evidence.iter().any(|e| e.source != Source::Latency);
    let unknown = b.resource == Resource::Unknown || (b.confidence == Confidence::Low && !seen);
    unknown.then(|| {
        format!(
            "cannot say: no signal names what binds; {}",
            b.settle.as_deref().unwrap_or(
                "the service's own gauges (--metrics) or its PID (--pid) would settle it"
            )
        )
    })
}

/// One simulated step.
fn step(net: &Network, runtime: &Runtime, rate: f64, d: Duration, timeout: Duration) -> SimOutcome {
    let driver = Driver::constant(rate, d);
    let shape = net.model.shape(&net.params, &net.host());
    run_sim(&SimInput {
        shape: &shape,
        steps: &net.steps,
        driver: &driver,
        connections: ConnectionMode::default(),
        timeout,
        pg_pool: net.params.pg_pool(),
        scheduler: Scheduler::of(net.model, &net.params, runtime),
        noise: None,
    })
}

/// Did a simulated step meet the objective (read as a measured one is)?
fn passes(slo: &Slo, out: &SimOutcome) -> bool {
    let within = |ms: f64| out.latency.count_at_most((ms * 1000.0) as u64);
    slo.judge(&iolab_model::capacity::Observed {
        planned: out.offered,
        success: if out.offered == 0 {
            0.0
        } else {
            out.ok as f64 / out.offered as f64
        },
        answered_within: &within,
    })
    .is_ok()
}

/// The closed-form capacity of `net`, req/s.
pub fn closed_form(net: &Network) -> Option<f64> {
    let work = HttpWork {
        steps: net.steps.clone(),
        driver: Driver::constant(1.0, Duration::from_secs(1)),
        connections: ConnectionMode::default(),
        timeout: Duration::from_secs(1),
        interval: Duration::from_secs(1),
        command: None,
        body: Default::default(),
        foreign: None,
        held: None,
    };
    crate::predict_http(net.model, &net.params, &work, net.host()).capacity_rps
}

/// The highest simulated rate that meets the objective, to 1%: a ramp from
/// the closed form's capacity, then a bisection; never above the closed
/// form. The simulation's work is deterministic, so its queue grows only
/// past that bound, and slowly enough that a step as long as the search's
/// passes up to its precision beyond it (a loop on one core passed at 105%
/// of its CPU); a measured service, whose times vary, fails before it
/// (quiet CPU-bound Bs passed at 87-95% of their core).
pub fn slo_capacity(net: &Network, runtime: &Runtime, r: &Replay) -> Option<f64> {
    let guess = closed_form(net)?;
    let pass = |rate: f64| passes(r.slo, &step(net, runtime, rate, r.step, r.timeout));
    let (mut lo, mut hi) = (0.0, guess * 1.2);
    for _ in 0..4 {
        if !pass(hi) {
            break;
        }
        lo = hi;
        hi *= 2.0;
    }
    while hi - lo > 0.01 * hi {
        let mid = (lo + hi) / 2.0;
        if pass(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo > 0.0).then_some(lo.min(guess))
}

/// Simulate a change at the measured rates and search its capacity (none
/// when it cannot be said).
pub fn simulate(c: &Change, r: &Replay) -> WhatIf {
    if let Some(why) = &c.cannot_say {
        return WhatIf {
            label: c.network.label(),
            change: c.change.clone(),
            model: c.network.model.as_str().to_string(),
            fitted: c.fitted,
            capacity_rps: None,
            slo_capacity_rps: None,
            points: Vec::new(),
            cannot_say: Some(why.clone()),
        };
    }
    let points = r
        .rates
        .iter()
        .map(|rate| {
            let out = step(&c.network, &c.runtime, *rate, r.step, r.timeout);
            let q = |x: f64| out.latency.quantile(x) as f64 / 1e3;
            WhatIfPoint {
                rate_rps: *rate,
                success_ratio: if out.offered == 0 {
                    0.0
                } else {
                    out.ok as f64 / out.offered as f64
                },
                p50_ms: q(0.5),
                p99_ms: q(0.99),
            }
        })
        .collect();
    WhatIf {
        label: c.network.label(),
        change: c.change.clone(),
        model: c.network.model.as_str().to_string(),
        fitted: c.fitted,
        capacity_rps: closed_form(&c.network),
        slo_capacity_rps: slo_capacity(&c.network, &c.runtime, r),
        points,
        cannot_say: None,
    }
}

/// How long a closed loop is simulated: the steady state's throughput,
/// whatever the measured level's length.
const CLOSED_LOOP: Duration = Duration::from_secs(5);

/// The fitted service's throughput under `clients` closed-loop clients:
/// its network simulated for [`CLOSED_LOOP`], the requests it finished
/// within the window (not those still held when the window closed) per
/// second, times the share of them answered 2xx in time, req/s. What the
/// queueing fit predicts for a level of a USL sweep.
pub fn closed_loop_rps(f: &Fit, clients: u32, timeout: Duration) -> Option<f64> {
    let net = network(f);
    let driver = Driver::Closed {
        concurrency: clients,
        requests: None,
        duration: Some(CLOSED_LOOP),
    };
    let shape = net.model.shape(&net.params, &net.host());
    let out = run_sim(&SimInput {
        shape: &shape,
        steps: &net.steps,
        driver: &driver,
        connections: ConnectionMode::default(),
        timeout,
        pg_pool: net.params.pg_pool(),
        scheduler: Scheduler::of(net.model, &net.params, &foreign()),
        noise: None,
    });
    if out.window_s <= 0.0 || out.completed == 0 {
        return None;
    }
    let ok_share = out.ok as f64 / out.completed as f64;
    Some(out.completed_in_window as f64 / out.window_s * ok_share.min(1.0))
}

/// Every change of [`changes`], simulated.
pub fn what_if(f: &Fit, r: &Replay) -> Vec<WhatIf> {
    changes(f).iter().map(|c| simulate(c, r)).collect()
}
