//! One step of a capacity search: hold a constant open-loop rate against
//! the target, measure it as a run is measured (the attack, and the
//! target's telemetry and CPU from `/proc` when its PID is known, the busy
//! time of its cores when it is pinned, its own Prometheus series when
//! named), judge it against the objective; and the recovery after a failed
//! step (a rest after a collapse, then the settle that lets its queue
//! drain) before the next.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use iolab_loadgen::{AttackReport, Hooks};
use iolab_model::attack::AttackPlan;
use iolab_model::capacity::usl::SweepLevel;
use iolab_model::capacity::{CpuSource, Observed, SearchStage, Slo, StepRecord, Within};
use iolab_model::driver::{ConnectionMode, Driver};
use iolab_model::request::RequestSet;

use super::bench::{Bench, StepError};
use iolab_telemetry as telemetry;
use iolab_telemetry::procs::tree_cpu_seconds;
use iolab_telemetry::{cores, jit};

/// Where and how one target is loaded.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The URL attacked (the first request's).
    pub url: String,
    /// Method, headers, body, TLS.
    pub request: RequestSet,
    /// Client timeout per request.
    pub timeout: Duration,
    /// Connection handling.
    pub connections: ConnectionMode,
    /// CPUs for the generator (empty: not pinned).
    pub gen_cpus: Vec<usize>,
    /// CPUs the target is pinned to, the generator kept off them (empty:
    /// not pinned); their busy time is read each step.
    pub target_cpus: Vec<usize>,
    /// The target's PID, when known.
    pub pid: Option<u32>,
    /// The target's Prometheus endpoint and the series to keep, when named.
    pub metrics: Option<(String, Vec<String>)>,
    /// Ctrl-C.
    pub cancel: Arc<AtomicBool>,
    /// `--live`: every step's attack is fed here.
    pub live: Option<Arc<iolab_loadgen::LiveFeed>>,
    /// A built-in target's base URL (its `/work` takes the steps in the
    /// query); none for a foreign one, whose requests are its own.
    pub work_base: Option<String>,
}

impl Probe {
    /// The same target sent `steps` in place of the run's (the lab's copy
    /// of a built-in target's runtime and model serving only that: whatif's
    /// calibration); `None` for a foreign target.
    pub fn serving(&self, steps: &iolab_model::Step) -> Option<Probe> {
        let base = self.work_base.as_ref()?;
        Some(Probe {
            url: iolab_model::experiment::WorkBody::Json.work_url(base, steps),
            ..self.clone()
        })
    }

    pub(super) fn plan(&self, driver: Driver, interval: Duration) -> AttackPlan {
        AttackPlan {
            connections: self.connections,
            timeout: self.timeout,
            interval,
            threads: (!self.gen_cpus.is_empty()).then_some(self.gen_cpus.len()),
            cpus: self.gen_cpus.clone(),
            spin: !self.gen_cpus.is_empty(),
            request: self.request.clone(),
            ..AttackPlan::new(self.url.clone(), driver)
        }
    }

    /// The target's own cores: pinned, and none of them the generator's.
    fn pinned_cores(&self) -> Option<&[usize]> {
        let apart = !self.target_cpus.is_empty()
            && !self.target_cpus.iter().any(|c| self.gen_cpus.contains(c));
        apart.then_some(self.target_cpus.as_slice())
    }
}

/// The real bench: the load generator, and the target's telemetry.
impl Bench for Probe {
    /// Hold `rate` for `duration` and judge it.
    fn step(
        &self,
        slo: &Slo,
        rate: f64,
        duration: Duration,
        stage: SearchStage,
    ) -> Result<StepRecord, StepError> {
        let interval = (duration / 10).max(Duration::from_millis(50));
        let plan = self.plan(super::mix::driver(&self.request, rate, duration), interval);
        let sampler = self.pid.map(|p| telemetry::Sampler::start(p, None));
        let watch = self.pid.map(super::watch::Watch::start);
        let scraper = self.metrics.clone().map(Scraper::start);
        let window = CpuWindow::open(self);
        let hooks = Hooks {
            cancel: Some(self.cancel.clone()),
            live: self.live.clone(),
            ..Hooks::default()
        };
        let report =
            iolab_loadgen::attack(&plan, &hooks).map_err(|e| StepError::Refused(e.to_string()))?;
        let cpu = window.close(self);
        let verdict = judge(slo, &report, 0.0);
        // A late generator excuses a fail only if the fail goes away with every
        // answer's latency forgiven the generator's largest lateness.
        let excused = judge(slo, &report, report.result.generator.lag_max_ms).is_ok();
        let a = report.result;
        let signals = watch.map(super::watch::Watch::finish);
        let telemetry = sampler
            .map(|s| s.finish(a.started_unix_ms as f64))
            .unwrap_or_default();
        let answered = a.requests.answered();
        let late = a.generator.saturated;
        let saturated = late && verdict.is_err() && excused;
        Ok(StepRecord {
            rate_rps: rate,
            stage: Some(stage),
            duration_s: duration.as_secs_f64(),
            // Latency counts from each request's intended send time, so a late
            // generator only makes the target look worse: a pass stands, a
            // fail is no verdict on the target (the search stops there).
            passed: verdict.is_ok(),
            verdict: match (&verdict, late, saturated) {
                (Ok(()), false, _) => format!("meets {slo}"),
                (Ok(()), true, _) => format!("meets {slo} though the generator was late"),
                (Err(why), _, false) => why.clone(),
                (Err(why), _, true) => {
                    format!("the generator was the bottleneck: no verdict on the target ({why})")
                }
            },
            success_ratio: a.success_ratio(),
            goodput_rps: a.throughput_rps.goodput,
            p50_ms: a.latency_ms.p50,
            p99_ms: a.latency_ms.p99,
            in_flight: a.throughput_rps.achieved * a.latency_ms.mean / 1000.0,
            cpu_cores: cpu.process_s.map(|c| c / cpu.wall_s),
            compiler_cores: cpu.compiler_s.map(|c| c / cpu.wall_s),
            cpu_per_request_ms: cpu
                .process_s
                .filter(|_| answered > 0)
                .map(|c| c * 1000.0 / answered as f64),
            core_busy_cores: cpu.cores.map(|c| c.busy_s / cpu.wall_s),
            core_irq_cores: cpu.cores.map(|c| c.irq_s / cpu.wall_s),
            metrics: scraper.map(Scraper::finish).unwrap_or_default(),
            generator_saturated: saturated,
            windows: None,
            endpoints: Vec::new(),
            within: slo
                .bounds_ms()
                .into_iter()
                .map(|b| Within {
                    below_ms: b,
                    answered: report.latency.count_between(0, (b * 1000.0) as u64),
                })
                .collect(),
            signals,
            attack: a,
            telemetry,
        })
    }

    /// After `failed`, a step that did not meet `slo`: when it collapsed
    /// ([`collapsed`]), rest as long as it lasted, then [`Bench::settle`].
    /// A collapse leaves what a few quick requests do not show: Spring's
    /// virtual threads, pinned to one CPU, failed 500/s half a second after
    /// a step at 800/s answered none (631 of 1,000 in time) and passed it
    /// (p99 150 ms) after 4 s, as after 3 s in another run; in the whatif
    /// searches of two runs (0.1-0.3 s between steps) they failed 500/s,
    /// and passed 475, after the same collapse (s13).
    fn recover(&self, failed: &StepRecord, slo: &Slo, quick: Duration) {
        if collapsed(failed, slo) {
            rest(
                &self.cancel,
                Duration::from_secs_f64(failed.duration_s.clamp(0.0, 10.0)),
            );
        }
        self.settle(quick);
    }

    /// After a failed step: wait until single requests come back within
    /// `quick` again, in any status (the target's queue has drained), at
    /// most the timeout plus two seconds.
    fn settle(&self, quick: Duration) {
        let deadline = Instant::now() + self.timeout + Duration::from_secs(2);
        let driver = Driver::Closed {
            concurrency: 1,
            requests: Some(3),
            duration: None,
        };
        let plan = AttackPlan {
            threads: Some(1),
            cpus: Vec::new(),
            spin: false,
            ..self.plan(driver, Duration::from_secs(1))
        };
        let hooks = Hooks {
            cancel: Some(self.cancel.clone()),
            ..Hooks::default()
        };
        while Instant::now() < deadline && !self.cancel.load(Ordering::Relaxed) {
            match iolab_loadgen::attack(&plan, &hooks) {
                // Answered, in any status: a target that fails half its
                // requests by design has drained when it answers at once
                // (waiting for three 2xx cost it 3 s a window: r54_2).
                Ok(r)
                    if r.result.requests.answered() == 3
                        && r.result.latency_ms.max <= ms(quick) =>
                {
                    return
                }
                _ => thread::sleep(Duration::from_millis(100)),
            }
        }
    }

    /// Median latency of a few single requests, ms: the unloaded service time.
    fn unloaded_ms(&self) -> Option<f64> {
        let driver = Driver::Closed {
            concurrency: 1,
            requests: Some(20),
            duration: Some(self.timeout * 2),
        };
        let plan = AttackPlan {
            threads: Some(1),
            ..self.plan(driver, Duration::from_secs(1))
        };
        let r = iolab_loadgen::attack(&plan, &Hooks::default()).ok()?;
        (r.result.requests.ok > 0).then_some(r.result.service_ms.p50)
    }

    fn closed(&self, clients: u32, d: Duration) -> Result<Option<SweepLevel>, StepError> {
        self.closed_loop(clients, d)
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    fn target(&self) -> String {
        super::describe(self)
    }

    fn watch_machine(&self) -> Box<dyn super::bench::MachineWatch + '_> {
        Box::new(super::machine::Watch::start(
            &self.target_cpus,
            self.pid,
            self.metrics.as_ref().map(|(url, _)| url.as_str()),
        ))
    }

    fn cpu_source(&self) -> CpuSource {
        if self.pid.is_some() {
            CpuSource::Process
        } else {
            CpuSource::Cores
        }
    }
}

/// The target's CPU over one step: its process tree's and its pinned
/// cores', read together and over the same wall time (not the attack's own
/// elapsed time, which leaves out its setup: a busy core read 1.05 cores).
struct CpuWindow {
    t0: Instant,
    process_s: Option<f64>,
    compiler_ns: Option<HashMap<u32, u64>>,
    cores: Option<cores::CoreTimes>,
}

/// What a [`CpuWindow`] read.
struct CpuUsed {
    /// Wall time between the reads, s.
    wall_s: f64,
    /// CPU seconds of the process tree.
    process_s: Option<f64>,
    /// Of them, its JIT's compiler threads'.
    compiler_s: Option<f64>,
    /// The pinned cores' counters, seconds.
    cores: Option<cores::CoreTimes>,
}

impl CpuWindow {
    fn open(p: &Probe) -> CpuWindow {
        CpuWindow {
            process_s: p.pid.and_then(tree_cpu_seconds),
            compiler_ns: p.pid.map(jit::compiler_ns),
            cores: p.pinned_cores().and_then(cores::read),
            t0: Instant::now(),
        }
    }

    fn close(self, p: &Probe) -> CpuUsed {
        let process = p.pid.and_then(tree_cpu_seconds);
        let compiler = p.pid.map(jit::compiler_ns);
        let cores = p.pinned_cores().and_then(cores::read);
        CpuUsed {
            wall_s: self.t0.elapsed().as_secs_f64().max(1e-3),
            process_s: self.process_s.zip(process).map(|(a, b)| (b - a).max(0.0)),
            compiler_s: self
                .compiler_ns
                .zip(compiler)
                .and_then(|(a, b)| jit::since(&a, &b)),
            cores: self.cores.zip(cores).map(|(a, b)| b.since(a)),
        }
    }
}

/// Sleep `d`, or until Ctrl-C: a rest of up to ten seconds is not a wait
/// the user must sit through after asking to stop.
fn rest(cancel: &AtomicBool, d: Duration) {
    let until = Instant::now() + d;
    while !cancel.load(Ordering::Relaxed) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// A step collapsed: fewer than half its requests succeeded in time, or
/// half of them were later than the objective's tightest latency. A server
/// that answered most of its failures with an error status (a 500, a 503
/// shedding load) kept up with them: nothing is queued to rest for, and a
/// rest per window made a search of a target failing half its requests at
/// every rate take 78 s for 32 s of load (r54_1).
pub(super) fn collapsed(s: &StepRecord, slo: &Slo) -> bool {
    let r = &s.attack.requests;
    let failed = r.planned.saturating_sub(r.ok);
    let answered_its_failures = failed > 0 && r.non_2xx.saturating_mul(2) >= failed;
    (s.success_ratio < 0.5 && !answered_its_failures)
        || slo.tightest_ms().is_some_and(|ms| s.p50_ms > ms)
}

/// `slo` judged on an attack: latency clauses over every planned request,
/// each answer's latency forgiven `forgive_ms` (the generator's lateness,
/// when asking whether it explains a fail; 0 otherwise).
// A String is right here: the Err is the objective's verdict in words
// (`Slo::judge`), kept as the step record's text, not a fault.
pub fn judge(slo: &Slo, report: &AttackReport, forgive_ms: f64) -> Result<(), String> {
    let a = &report.result;
    let within = |ms: f64| {
        report
            .latency
            .count_between(0, ((ms + forgive_ms) * 1000.0) as u64)
    };
    slo.judge(&Observed {
        planned: a.requests.planned,
        success: a.success_ratio(),
        answered_within: &within,
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub use super::scrape::pick;
use super::scrape::Scraper;

#[cfg(test)]
mod tests;
