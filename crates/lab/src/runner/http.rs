//! A served run: its repetitions (the median by goodput is the run's
//! result), and one repetition: start the target, pass the gate, warm up,
//! measure with telemetry and backend counters, stop.

use std::thread;
use std::time::Duration;

use iolab_backends::CountError;
use iolab_loadgen::{AttackError, RequestRow};
use iolab_model::attack::AttackResult;
use iolab_model::experiment::{HttpWork, RunSpec};
use iolab_model::runs::{BackendCounts, Outcome, RunRecord, Spread};
use iolab_model::spans::RunSpans;
use iolab_model::telemetry::Telemetry;
use iolab_model::verify::VerifyReport;

use super::load::{attack_plan, warmup_driver};
use super::Ctx;
use crate::drain;
use crate::progress::Stage;
use crate::services::{Addresses, Needs};
use crate::targets::{Launch, StartOptions, Target};
use iolab_telemetry as telemetry;

/// What one repetition of an HTTP run produced.
pub(super) struct Rep {
    pub(super) outcome: Outcome,
    pub(super) attack: Option<AttackResult>,
    pub(super) telemetry: Telemetry,
    pub(super) verify: Option<VerifyReport>,
    pub(super) backend_counts: Option<BackendCounts>,
    /// Every request of the measured load, when spans were asked for.
    pub(super) rows: Vec<RequestRow>,
    pub(super) spans: Option<RunSpans>,
}

impl Rep {
    pub(super) fn new() -> Rep {
        Rep {
            outcome: Outcome::Completed,
            attack: None,
            telemetry: Telemetry::default(),
            verify: None,
            backend_counts: None,
            rows: Vec::new(),
            spans: None,
        }
    }

    /// A repetition whose target did not start: interrupted when the user
    /// cancelled (the start was cut short), else why it failed.
    pub(super) fn start_failed(mut self, detail: String, cancelled: bool) -> Rep {
        self.outcome = if cancelled {
            Outcome::Interrupted
        } else {
            Outcome::StartFailed { detail }
        };
        self
    }

    /// Keep what the measured load gave (its result and rows, or why there
    /// is none); returns the run's time zero, Unix ms: the load's own start
    /// when it has one, else `zero`.
    pub(super) fn keep_measured(
        &mut self,
        measured: Result<(AttackResult, bool, Vec<RequestRow>), AttackError>,
        zero: f64,
    ) -> f64 {
        match measured {
            Ok((result, cancelled, rows)) => {
                self.rows = rows;
                if cancelled {
                    self.outcome = Outcome::Interrupted;
                }
                let zero = if result.started_unix_ms > 0 {
                    result.started_unix_ms as f64
                } else {
                    zero
                };
                self.attack = Some(result);
                zero
            }
            Err(e) => {
                self.outcome = Outcome::Skipped {
                    detail: format!("load generator refused the plan: {e}"),
                };
                zero
            }
        }
    }
}

impl Ctx<'_> {
    pub(super) fn http_run(
        &self,
        index: usize,
        spec: &RunSpec,
        w: &HttpWork,
        launch: &Launch,
    ) -> RunRecord {
        let mut reps: Vec<Rep> = Vec::new();
        for rep in 0..self.plan.reps.max(1) {
            if self.opts.cancelled() {
                break;
            }
            self.observer
                .run_started(index, self.plan.runs.len(), spec, rep);
            let r = self.http_rep(spec, w, launch, self.slot(index, rep));
            let stop = !r.outcome.is_completed();
            reps.push(r);
            if stop {
                break;
            }
        }
        let mut record = RunRecord::new(spec.clone(), Outcome::Interrupted);
        if reps.is_empty() {
            return record;
        }
        // The run's outcome is the first failure, if any.
        record.outcome = reps
            .iter()
            .map(|r| r.outcome.clone())
            .find(|o| !o.is_completed())
            .unwrap_or(Outcome::Completed);
        record.verify = reps.iter().find_map(|r| r.verify.clone());
        let measured: Vec<usize> = (0..reps.len())
            .filter(|&i| reps[i].attack.is_some())
            .collect();
        if measured.is_empty() {
            record.telemetry = std::mem::take(&mut reps[0].telemetry);
            return record;
        }
        let goodput = |i: usize| {
            reps[i]
                .attack
                .as_ref()
                .map_or(0.0, |a| a.throughput_rps.goodput)
        };
        let mut order = measured.clone();
        order.sort_by(|a, b| goodput(*a).total_cmp(&goodput(*b)));
        let median = order[(order.len() - 1) / 2];
        if measured.len() > 1 {
            let attacks: Vec<&AttackResult> = measured
                .iter()
                .filter_map(|&i| reps[i].attack.as_ref())
                .collect();
            record.spread = Some(spread(&attacks));
            record.reps = attacks.into_iter().cloned().collect();
        }
        record.attack = reps[median].attack.take();
        record.backend_counts = reps[median].backend_counts.take();
        record.spans = reps[median].spans.take();
        record.telemetry = std::mem::take(&mut reps[median].telemetry);
        record
    }

    /// One repetition; `slot` is its start (Unix ms) in a sharded experiment.
    fn http_rep(&self, spec: &RunSpec, w: &HttpWork, launch: &Launch, slot: Option<u64>) -> Rep {
        if let Some(f) = &w.foreign {
            return self.foreign_rep(spec, w, f);
        }
        let mut rep = Rep::new();
        self.observer.stage(spec, Stage::Starting);
        let opts = StartOptions {
            backends: self.backends.clone(),
            cpus: self.target_cpus.clone(),
            separate_metrics: launch.separate_metrics(),
        };
        let timeout = launch.start_timeout(self.opts.start_timeout);
        let starting = std::time::Instant::now();
        let started = launch
            .command(spec, &opts, &self.exe)
            .map_err(|e| crate::targets::StartError(e.to_string()))
            .and_then(|cmd| Target::start(&cmd, timeout, &self.opts.cancel));
        let mut target = match started {
            Ok(t) => t,
            Err(e) => return rep.start_failed(e.0, self.opts.cancelled()),
        };
        let ready = starting.elapsed();
        if self.opts.verify {
            if let Err(e) = self.gate(spec, w, &target, &mut rep.verify) {
                let detail = e.to_string();
                rep.outcome = match target.exit_detail() {
                    _ if self.opts.cancelled() => Outcome::Interrupted,
                    Some(d) => Outcome::TargetDied { detail: d },
                    None => Outcome::VerifyFailed { detail },
                };
                self.stop(spec, &mut target);
                return rep;
            }
        }
        let metrics = target
            .metrics_url
            .clone()
            .unwrap_or_else(|| target.url.clone());
        // A sample of the run before is not this one's.
        let _ = self.telemetry.take();
        let sampler = telemetry::Sampler::start_with(telemetry::Sources {
            pid: target.pid(),
            port: Some(target.port),
            metrics_url: Some(format!("{metrics}/metrics")),
            metrics_separate: target.metrics_url.is_some(),
            series: Vec::new(),
            tap: Some(self.telemetry.clone()),
        });
        self.warm_up(spec, w, &target, &metrics);
        let opened = spec
            .spans
            .map(|_| super::spans::offered(launch).and_then(|()| super::spans::open(&metrics)));
        let zero = self.measure(spec, w, &mut target, &mut rep, slot);
        rep.spans = opened.map(|opened| {
            let measured = opened.and_then(|()| match &rep.attack {
                Some(a) => super::spans::read(&metrics, a, &rep.rows, w.timeout),
                None => Err(super::spans::SpansError::NotMeasured),
            });
            super::spans::record(measured, spec, self.cores)
        });
        rep.telemetry = sampler.finish(zero);
        rep.telemetry.ready_s = Some(ready.as_secs_f64());
        if let Some(d) = target.exit_detail() {
            rep.outcome = Outcome::TargetDied { detail: d };
        }
        self.stop(spec, &mut target);
        rep
    }

    /// Warm-up: a few clients for the plan's warm-up time, not recorded, then
    /// let the target settle.
    fn warm_up(&self, spec: &RunSpec, w: &HttpWork, target: &Target, metrics: &str) {
        let Some(driver) = warmup_driver(&w.driver, self.plan.warmup, self.plan.warmup_requests)
        else {
            return;
        };
        if self.opts.cancelled() {
            return;
        }
        self.observer.stage(spec, Stage::WarmingUp);
        let plan = attack_plan(&target.url, w, driver, &self.gen_cpus);
        let _ = self.attack(spec, Stage::WarmingUp, &plan);
        self.settle(metrics, w.timeout);
    }

    /// The measured load, with the backends' counters around it; returns the
    /// attack's start (Unix ms), the zero of the telemetry series.
    fn measure(
        &self,
        spec: &RunSpec,
        w: &HttpWork,
        target: &mut Target,
        rep: &mut Rep,
        slot: Option<u64>,
    ) -> f64 {
        let mut zero = telemetry::unix_ms();
        if self.opts.cancelled() {
            rep.outcome = Outcome::Interrupted;
            return zero;
        }
        if target.exit_detail().is_some() {
            return zero;
        }
        self.observer.stage(spec, Stage::Measuring);
        let mut plan = attack_plan(&target.url, w, w.driver.clone(), &self.gen_cpus);
        if let Some(s) = &self.opts.sharding {
            plan.shard = Some(s.shard);
            plan.start_at_unix_ms = slot;
        }
        // The client's view of the spans' sample: one row per request.
        plan.record_requests = spec.spans.is_some();
        let counted = self.backends.only(Needs::of_steps(&w.steps).kinds());
        let before = read_counts(&counted);
        zero = telemetry::unix_ms();
        let measured = match &w.held {
            Some(load) => self.held_attack(&target.url, w, load),
            None => self.attack(spec, Stage::Measuring, &plan),
        };
        rep.backend_counts = before.map(|b| counts_since(&counted, b));
        rep.keep_measured(measured, zero)
    }

    pub(super) fn stop(&self, spec: &RunSpec, target: &mut Target) {
        self.observer.stage(spec, Stage::Stopping);
        let port = target.port;
        target.stop(self.opts.grace);
        drain::wait(port, self.ephemeral, self.opts.drain_max);
    }
}

/// Counters of the backends in `counted`; `None` when it names none.
fn read_counts(counted: &Addresses) -> Option<Result<BackendCounts, CountError>> {
    if counted.is_empty() {
        return None;
    }
    Some(iolab_backends::counts::read(
        &iolab_backends::BackendConfig::new(counted.clone(), &Default::default()),
    ))
}

/// What the backends counted since `before` (read a moment after the load,
/// as a backend may book a call just after its answer left).
fn counts_since(counted: &Addresses, before: Result<BackendCounts, CountError>) -> BackendCounts {
    thread::sleep(Duration::from_millis(200));
    match (
        before,
        read_counts(counted).expect("counted names a backend"),
    ) {
        (Ok(b), Ok(a)) => a.since(&b),
        (Err(e), _) | (_, Err(e)) => BackendCounts::unread(e.to_string()),
    }
}

/// Min and max of the key figures over repetitions.
pub(crate) fn spread(attacks: &[&AttackResult]) -> Spread {
    let range = |f: &dyn Fn(&AttackResult) -> f64| {
        attacks
            .iter()
            .map(|a| f(a))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    Spread {
        reps: attacks.len() as u32,
        goodput_rps: range(&|a| a.throughput_rps.goodput),
        p50_ms: range(&|a| a.latency_ms.p50),
        p99_ms: range(&|a| a.latency_ms.p99),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_min_and_max() {
        let mut a = AttackResult::default();
        a.throughput_rps.goodput = 10.0;
        a.latency_ms.p99 = 5.0;
        let mut b = a.clone();
        b.throughput_rps.goodput = 20.0;
        b.latency_ms.p99 = 3.0;
        let s = spread(&[&a, &b]);
        assert_eq!(s.reps, 2);
        assert_eq!(s.goodput_rps, (10.0, 20.0));
        assert_eq!(s.p99_ms, (3.0, 5.0));
    }
}
