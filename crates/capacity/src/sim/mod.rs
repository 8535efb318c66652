//! The simulated [`Bench`]: a known service ([`Service`]: a model, its
//! knobs, one request's work, the cores, the processes and threads `/proc`
//! would show) run on `iolab_predict`'s event simulation, step by step, with
//! noise dialled ([`Dial`]): service-time spread, pauses, a slower CPU for
//! a while. Each step is read as the real one is (the attack's counts and
//! latencies, the CPU, the signals the binding rules read:
//! [`readings`]), so a capacity search, its fit, the binding rules and the
//! what-ifs run on it unchanged, in milliseconds, against a truth known in
//! advance ([`truth`]).
//!
//! The bench keeps a clock across steps: a step that failed leaves the
//! requests its clients gave up on in the server, which works through them
//! before it serves the next step's (a stall at that step's start), unless
//! the bench waited for them ([`Bench::recover`], [`Bench::settle`]): what
//! a real target does with a backlog (r31_22).

pub mod dial;
pub mod readings;
pub mod series;
pub mod truth;

#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::time::Duration;

use iolab_model::capacity::usl::SweepLevel;
use iolab_model::capacity::{CpuSource, Neighbours, Search, SearchStage, Second, Slo, StepRecord};
use iolab_model::driver::{ConnectionMode, Driver};
use iolab_model::{ModelKind, Step};
use iolab_predict::calibration::NS_PER_TERM;
use iolab_predict::fit::{knobs, Network};
use iolab_predict::sim::{simulate, Scheduler, SimInput, SimOutcome};
use iolab_predict::whatif::{closed_form, foreign};

use super::bench::{Bench, StepError};
use super::Options;
pub use dial::{Dial, Neighbour, Pauses, SlowCpu};
pub use series::Exports;

/// A service whose truth is known: what it runs, and what of it `/proc`
/// shows besides.
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    /// The model, its knobs (the pool a `pg` step waits for among them),
    /// one request's work, the cores.
    pub network: Network,
    /// Processes beside the ones that serve (a wrapper script, a runtime's
    /// launcher, a server's master: gunicorn under iolab's python runtime
    /// ran three).
    pub supervisors: u32,
    /// Threads beside the ones that serve (a JVM's GC and compiler threads,
    /// a metrics thread).
    pub other_threads: u32,
    /// A JIT compiling through the first requests, when it has one.
    pub jit: Option<Jit>,
    /// The series it exports of itself.
    pub exports: Exports,
    /// Seen from afar: its series only (no PID: no `/proc`, no CPU).
    pub remote: bool,
}

/// A JIT compiler: threads burning CPU beside the handlers until the
/// service has answered `requests` (counted by the step's CPU, and as the
/// compiler threads' own).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Jit {
    /// Cores the compiler threads burn while compiling.
    pub cores: f64,
    /// Requests answered before it is done.
    pub requests: f64,
}

impl Service {
    /// A service of `network`, nothing beside it.
    pub fn of(network: Network) -> Service {
        Service {
            network,
            supervisors: 0,
            other_threads: 0,
            jit: None,
            exports: Exports::Nothing,
            remote: false,
        }
    }

    /// Its capacity with no noise (the busiest resource's), req/s.
    pub fn saturation_rps(&self) -> f64 {
        closed_form(&self.network).unwrap_or(f64::INFINITY)
    }

    /// One request's time with nothing waited for, ms.
    pub fn service_ms(&self) -> f64 {
        iolab_predict::sim::program::Program::compile(&self.network.steps, true).unloaded_ns()
            as f64
            / 1e6
    }
}

/// One request's work: `cpu_ms` of CPU, then `pg_ms` holding a pooled
/// connection, then `sleep_ms` of waiting (each part only when above 0), as
/// the fit writes a service (`seq(cpu:T,pg:W,sleep:R)`).
pub fn work(cpu_ms: f64, pg_ms: f64, sleep_ms: f64) -> Step {
    let terms = (cpu_ms * 1e6 / NS_PER_TERM).round() as u64;
    let mut parts = Vec::new();
    if terms > 0 {
        parts.push(format!("cpu:{terms}"));
    }
    if pg_ms > 0.0 {
        parts.push(format!("pg:{pg_ms:.3}"));
    }
    if sleep_ms > 0.0 || parts.is_empty() {
        parts.push(format!("sleep:{:.3}", sleep_ms.max(0.0)));
    }
    let text = format!("seq({})", parts.join(","));
    iolab_model::steps::parse(&text).unwrap_or(Step::Cpu { terms })
}

/// `model(knobs)` running `work` on `cores` cores.
pub fn network(model: ModelKind, pairs: &[(&str, u64)], work: Step, cores: u32) -> Network {
    Network {
        model,
        params: knobs(pairs),
        steps: work,
        cores,
        gil: false,
    }
}

/// What the bench carries from step to step.
#[derive(Debug, Clone, Default)]
struct Clock {
    /// Bench time now, s.
    now_s: f64,
    /// When the server will have worked through what earlier steps left.
    busy_until_s: f64,
    /// Runs simulated (each draws from its own seed).
    runs: u64,
    /// Requests answered so far (a JIT compiles by count).
    answered: f64,
    /// Most request threads and pooled connections ever in use: a pool
    /// keeps what it opened.
    threads_seen: u64,
    pg_seen: u32,
}

/// A known service on the simulation, with noise.
#[derive(Debug)]
pub struct SimBench {
    service: Service,
    dial: Dial,
    timeout: Duration,
    clock: RefCell<Clock>,
}

impl SimBench {
    /// `service` with `dial`'s noise, loaded by clients that wait `timeout`.
    pub fn new(service: Service, dial: Dial, timeout: Duration) -> SimBench {
        SimBench {
            service,
            dial,
            timeout,
            clock: RefCell::new(Clock::default()),
        }
    }

    /// The service it runs.
    pub fn service(&self) -> &Service {
        &self.service
    }

    /// A search's settings for it: the defaults on its cores, steps of at
    /// most 10 s (a simulated second costs as much as its requests).
    pub fn options(&self) -> Options {
        Options {
            max_step: Duration::from_secs(10),
            cores: self.service.network.cores,
            sweep: None,
            ..Options::default()
        }
    }

    /// Search it under `slo` with [`SimBench::options`], its fit and
    /// what-ifs included.
    pub fn search(&self, slo: &Slo) -> Search {
        let quiet = |_: &StepRecord| {};
        super::run("sim", self, slo, &self.options(), Vec::new(), &quiet)
    }

    /// Bench time now, s.
    pub fn now_s(&self) -> f64 {
        self.clock.borrow().now_s
    }

    /// Run `driver` for `length_s` from now, after the backlog earlier runs
    /// left (a stall at its start), and move the clock past it.
    fn run(&self, driver: &Driver, length_s: f64) -> SimOutcome {
        let net = &self.service.network;
        let mut c = self.clock.borrow_mut();
        let backlog_s = (c.busy_until_s - c.now_s).max(0.0);
        let horizon_s = length_s + self.timeout.as_secs_f64();
        c.runs += 1;
        let noise = self.dial.noise(c.runs, c.now_s, horizon_s, backlog_s);
        let shape = net.model.shape(&net.params, &net.host());
        let out = simulate(&SimInput {
            shape: &shape,
            steps: &net.steps,
            driver,
            connections: ConnectionMode::KeepAlive { max: 100_000 },
            timeout: self.timeout,
            pg_pool: net.params.pg_pool(),
            scheduler: Scheduler::of(net.model, &net.params, &foreign()),
            noise: Some(&noise),
        });
        // The attack ends when every request has its answer or its timeout.
        let last_s = out.latency.quantile(1.0) as f64 / 1e6;
        let timed_out = out.errors.get("timeout").copied().unwrap_or(0) > 0;
        let tail_s = if timed_out {
            self.timeout.as_secs_f64()
        } else {
            last_s.min(self.timeout.as_secs_f64())
        };
        let start = c.now_s;
        c.now_s = start + length_s + tail_s;
        // What its clients gave up on, the server works through after the
        // run's end (its window and a timeout), at its own pace.
        c.busy_until_s = if out.left_in_server == 0 {
            c.now_s
        } else {
            start + horizon_s + out.left_in_server as f64 / self.service.saturation_rps()
        };
        c.answered += out.ok as f64;
        c.threads_seen = c.threads_seen.max(out.peak_threads);
        c.pg_seen = c.pg_seen.max(out.pg_peak);
        out
    }

    /// Cores the JIT burns now, if it is still compiling.
    fn compiling(&self) -> Option<f64> {
        let jit = self.service.jit?;
        (self.clock.borrow().answered < jit.requests).then_some(jit.cores)
    }

    /// Wait `s` seconds of bench time.
    fn wait(&self, s: f64) {
        self.clock.borrow_mut().now_s += s.max(0.0);
    }
}

impl Bench for SimBench {
    fn step(
        &self,
        slo: &Slo,
        rate: f64,
        duration: Duration,
        stage: SearchStage,
    ) -> Result<StepRecord, StepError> {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(StepError::Refused(format!("no rate to hold: {rate}")));
        }
        let jit = self.compiling();
        let out = self.run(&Driver::constant(rate, duration), duration.as_secs_f64());
        let seen = {
            let c = self.clock.borrow();
            readings::Seen {
                threads: c.threads_seen,
                pg: c.pg_seen,
                jit_cores: jit,
            }
        };
        let at = readings::At {
            slo,
            rate,
            duration,
            stage,
        };
        Ok(readings::record(&at, &out, &self.service, &seen))
    }

    fn recover(&self, failed: &StepRecord, slo: &Slo, quick: Duration) {
        if super::step::collapsed(failed, slo) {
            self.wait(failed.duration_s.clamp(0.0, 10.0));
        }
        self.settle(quick);
    }

    fn settle(&self, _quick: Duration) {
        let cap = self.timeout.as_secs_f64() + 2.0;
        let (now, busy) = {
            let c = self.clock.borrow();
            (c.now_s, c.busy_until_s)
        };
        // Three single requests, once the backlog is worked through.
        let waited = (busy - now).clamp(0.0, cap);
        self.wait(waited + 3.0 * self.service.service_ms() / 1000.0);
    }

    fn unloaded_ms(&self) -> Option<f64> {
        let driver = Driver::Closed {
            concurrency: 1,
            requests: Some(20),
            duration: Some(self.timeout * 2),
        };
        let out = self.run(&driver, 20.0 * self.service.service_ms() / 1000.0);
        (out.ok > 0).then(|| out.latency.quantile(0.5) as f64 / 1e3)
    }

    fn closed(&self, clients: u32, d: Duration) -> Result<Option<SweepLevel>, StepError> {
        let driver = Driver::Closed {
            concurrency: clients,
            requests: None,
            duration: Some(d),
        };
        let out = self.run(&driver, d.as_secs_f64());
        Ok(Some(readings::level(clients, d, &out)))
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    fn cancelled(&self) -> bool {
        false
    }

    fn target(&self) -> String {
        let net = &self.service.network;
        format!("simulated {} running {}", net.label(), net.steps)
    }

    fn watch_machine(&self) -> Box<dyn super::bench::MachineWatch + '_> {
        Box::new(SimWatch {
            bench: self,
            from_s: self.now_s(),
        })
    }

    fn cpu_source(&self) -> CpuSource {
        CpuSource::Process
    }
}

/// The simulated machine watched through a search: a fixed loop timed every
/// quarter second of bench time, slower by the dial's factor inside its
/// slow window, as the real sampler reads a CPU that changed speed; and,
/// with a neighbour dialled, each second on the target's cores as the real
/// reader sees one (others' share, the worst thread's wait).
struct SimWatch<'a> {
    bench: &'a SimBench,
    from_s: f64,
}

impl super::bench::MachineWatch for SimWatch<'_> {
    fn finish(self: Box<Self>) -> Option<iolab_model::capacity::Machine> {
        let to_s = self.bench.now_s();
        let slow = self.bench.dial.slow;
        let n = ((to_s - self.from_s) / 0.25).floor().max(0.0) as usize;
        let timings: Vec<f64> = (0..n)
            .map(|k| {
                let t = self.from_s + k as f64 * 0.25;
                match slow {
                    Some(w) if t >= w.from_s && t < w.from_s + w.for_s => w.factor,
                    _ => 1.0,
                }
            })
            .collect();
        Some(iolab_model::capacity::Machine {
            target_cpu: iolab_model::whatif::CpuSpeed::of(&timings),
            neighbours: self.bench.dial.neighbour.and_then(|n| {
                let seconds = (to_s - self.from_s).floor().max(0.0) as usize;
                let read: Vec<Second> = (0..seconds)
                    .map(|k| self.from_s + k as f64 + 0.5)
                    .map(|t| match n.at(t) {
                        true => Second {
                            target: 1.0 - n.share,
                            others: n.share,
                            waited: n.share,
                        },
                        false => Second::default(),
                    })
                    .collect();
                Neighbours::of(&read)
            }),
            ..Default::default()
        })
    }
}
