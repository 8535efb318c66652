//! The CPU per endpoint of a replayed mix, read before its search: a
//! constant mix cannot split the target's CPU by endpoint (every step has
//! the same shares), so each endpoint is sent alone, one request at a time
//! (no queue: its cost, not a wait), at most [`MOST_REQUESTS`] requests or
//! [`EACH`], and the target's process tree's CPU time read from `/proc`
//! before and after, less what it burns idle (read for [`IDLE`] first).
//! The first [`MOST_ENDPOINTS`] endpoints by share are probed; the others
//! are said missing, and so is the mix's CPU then ([`MixCpu::of`]).
//!
//! **Cores available.** The target may run on its allowed CPUs, but on a
//! shared machine it gets them only part of the time: over the probe, the
//! time its threads ran and the time they waited on a run queue
//! (`schedstat`) give the share of its wanting a CPU that it had one, and
//! the CPU's bound counts the cores times that share. The share moves with
//! the machine: a loop pinned to a core shared with other sessions got it
//! 58% of the time over the probe, then held a third of the bound that
//! gave, the machine's load risen from 3 to 7.5. So the share at the
//! search's knee ([`got_at_knee`]) is read too, and counted when there.

use std::time::{Duration, Instant};

use iolab_loadgen::Hooks;
use iolab_model::capacity::{EndpointCpu, MixCpu, Search};
use iolab_model::driver::Driver;
use iolab_model::replay::{EndpointKey, ReplayMix};
use iolab_model::request::RequestSet;
use iolab_telemetry::procs::descendants;
use iolab_telemetry::procs::tree_cpu_seconds;
use iolab_telemetry::tasks::{cores_allowed, tasks};

use crate::Probe;

/// Most requests an endpoint is sent.
pub const MOST_REQUESTS: u64 = 300;

/// Longest an endpoint is sent for.
pub const EACH: Duration = Duration::from_secs(1);

/// How long the target is read idle.
pub const IDLE: Duration = Duration::from_millis(500);

/// Most endpoints probed (the mix's largest shares): 12 s at most.
pub const MOST_ENDPOINTS: usize = 12;

/// Each endpoint of `p`'s mix probed alone on the target of `p.pid`
/// (`host_cores`: the host's, the most its allowed CPUs count).
pub fn probe(p: &Probe, host_cores: u32) -> MixCpu {
    let Some(pid) = p.pid else {
        return MixCpu::missing("no PID: give --pid N");
    };
    let Some(mix) = &p.request.mix else {
        return MixCpu::missing("not a replayed mix");
    };
    let cores = cores_allowed(pid).map_or(host_cores, |c| c.min(host_cores).max(1));
    let Some(idle) = idle_cores(pid) else {
        return MixCpu::missing(format!("--pid {pid}: its CPU could not be read"));
    };
    let mut sched = Sched::default();
    let endpoints = (mix.endpoints.iter().enumerate())
        .map(|(i, key)| {
            let skip = match () {
                _ if i >= MOST_ENDPOINTS => Some(format!(
                    "not probed: the probe takes the {MOST_ENDPOINTS} largest endpoints"
                )),
                _ if p.cancel.load(std::sync::atomic::Ordering::Relaxed) => {
                    Some("not probed: interrupted".into())
                }
                _ => None,
            };
            match skip {
                Some(why) => missing(key, why),
                None => {
                    let before = Sched::read(pid);
                    let e = one(p, pid, mix, i, idle);
                    sched.add(before, Sched::read(pid));
                    e
                }
            }
        })
        .collect();
    MixCpu::of(endpoints, Some(idle), f64::from(cores), sched.got())
}

/// Time the target's threads ran and waited for a CPU, ns.
#[derive(Debug, Default, Clone, Copy)]
struct Sched {
    ran: u64,
    waited: u64,
}

impl Sched {
    /// Summed over every thread of `pid`'s tree now.
    fn read(pid: u32) -> Sched {
        let pids: Vec<u32> = std::iter::once(pid).chain(descendants(pid)).collect();
        (tasks(&pids).iter()).fold(Sched::default(), |s, t| Sched {
            ran: s.ran + t.on_cpu_ns.unwrap_or(0),
            waited: s.waited + t.run_delay_ns.unwrap_or(0),
        })
    }

    /// What passed from `a` to `b` (a thread gone meanwhile takes its
    /// time with it: never below 0).
    fn add(&mut self, a: Sched, b: Sched) {
        self.ran += b.ran.saturating_sub(a.ran);
        self.waited += b.waited.saturating_sub(a.waited);
    }

    /// The share of its wanting a CPU that it had one (`None`: it never
    /// ran, or schedstat is not there).
    fn got(&self) -> Option<f64> {
        let all = self.ran + self.waited;
        (self.ran > 0).then(|| self.ran as f64 / all as f64)
    }
}

/// The target's CPU with no load, cores.
fn idle_cores(pid: u32) -> Option<f64> {
    let (t0, c0) = (Instant::now(), tree_cpu_seconds(pid)?);
    std::thread::sleep(IDLE);
    let c1 = tree_cpu_seconds(pid)?;
    Some(((c1 - c0) / t0.elapsed().as_secs_f64()).max(0.0))
}

/// An endpoint not measured, and why.
fn missing(key: &EndpointKey, why: String) -> EndpointCpu {
    EndpointCpu {
        method: key.method.clone(),
        template: key.template.clone(),
        share: key.share,
        cpu_ms: None,
        service_ms: None,
        requests: 0,
        seconds: 0.0,
        fraction: None,
        missing: Some(why),
    }
}

/// Endpoint `i` of `mix` alone, one request at a time.
fn one(p: &Probe, pid: u32, mix: &ReplayMix, i: usize, idle: f64) -> EndpointCpu {
    let key = &mix.endpoints[i];
    let list: Vec<_> = (p.request.list.iter().enumerate())
        .filter(|(j, _)| mix.endpoint_of(*j) == i)
        .map(|(_, r)| r.clone())
        .collect();
    let Some(first) = list.first() else {
        return missing(key, "not probed: no request of it in the list".into());
    };
    let alone = Probe {
        url: first.url.clone(),
        request: RequestSet {
            mix: Some(ReplayMix {
                endpoints: vec![key.clone()],
                of_request: vec![0; list.len()],
            }),
            list,
            ..p.request.clone()
        },
        ..p.clone()
    };
    let driver = Driver::Closed {
        concurrency: 1,
        requests: Some(MOST_REQUESTS),
        duration: Some(EACH),
    };
    let hooks = Hooks {
        cancel: Some(p.cancel.clone()),
        ..Hooks::default()
    };
    let (t0, c0) = (Instant::now(), tree_cpu_seconds(pid));
    let report = iolab_loadgen::attack(&alone.plan(driver, EACH), &hooks);
    let (wall, c1) = (t0.elapsed().as_secs_f64(), tree_cpu_seconds(pid));
    let report = match report {
        Ok(r) => r,
        Err(e) => return missing(key, format!("the probe was refused: {e}")),
    };
    let a = &report.result;
    let answered = a.requests.answered();
    let mut e = missing(key, String::new());
    e.requests = answered;
    e.seconds = wall;
    e.missing = match (c0.zip(c1), answered) {
        (None, _) => Some(format!("--pid {pid} exited during the probe")),
        (_, 0) => Some(format!("none of its {} requests answered", a.requests.sent)),
        (Some((c0, c1)), n) => {
            e.cpu_ms = Some(per_request_ms(c1 - c0, idle, wall, n));
            e.service_ms = Some(a.latency_ms.p50);
            None
        }
    };
    e
}

/// CPU per request, ms: `cpu_s` used over `wall_s` with `n` answered,
/// less `idle` cores burnt whatever the load (at least 0).
pub fn per_request_ms(cpu_s: f64, idle: f64, wall_s: f64, n: u64) -> f64 {
    ((cpu_s - idle * wall_s) * 1000.0 / n.max(1) as f64).max(0.0)
}

/// The share of the time the target's threads had a CPU when they wanted
/// one at the knee (the highest rate held at or under the capacity): their
/// CPU busy over that plus the run-queue wait other work explains
/// (`StepRecord::cpu_wait_denied`; `None` without both).
pub fn got_at_knee(search: &Search) -> Option<f64> {
    let cap = search.capacity_rps?;
    let knee = (search.steps.iter())
        .filter(|s| s.passed && !s.generator_saturated && s.rate_rps <= cap)
        .max_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps))?;
    let busy = knee.cpu_cores?;
    let wait = knee.cpu_wait_denied(busy)?;
    (busy > 0.0).then(|| busy / (busy + wait))
}
