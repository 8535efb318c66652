//! What a request costs under B's runtime, measured before B is (a
//! counterfactual's `calibration`). A black-box fit reads A's CPU per
//! request at A's rates. That cost is the handler's own work plus what A's
//! runtime and model spend to carry a request (accept, parse, wake a
//! thread, switch, write), and the second part belongs to the runtime and
//! the rate, not to the work: on one core, Spring MVC held 525/s, virtual
//! threads 1,600/s and WebFlux 3,700/s of the same `sleep:400`, and every
//! quiet pair predicted beyond twice A's rates missed by 21-79%
//! (docs/capacity.md). So the lab starts its own copies of A's runtime and
//! model and of B's, each serving only the fitted wait (`sleep:S`):
//!
//! - A's copy at A's highest passing rate: A's cost there less its copy's
//!   is the handler's own work, which B keeps.
//! - B's copy at the rate B is predicted to hold: what B's runtime adds
//!   there. B's rate depends on its cost (the handler's work plus that), so
//!   B is predicted again with it and its copy measured again at the new
//!   rate, until the prediction moves by less than [`SETTLED`] (at most
//!   [`ROUNDS`] rates). A rate the copy fails the objective at is not read;
//!   B, doing that and more, is held to what the copy holds there.
//!
//! Both copies serve only the wait: the handler's work is added in
//! milliseconds, not as `cpu:` terms, which each runtime computes at its
//! own speed (CPython's about a hundred times the Rust target's; even the
//! Rust copy did `cpu:N` 13% faster than the constant the lab converts
//! with, and a quiet `whatif-cpu` copy serving the fitted request that way
//! read 20% high).
//!
//! A's cost and its copy's are each read twice at that rate (A's search
//! confirms its answer; the copy's two steady holds): the larger spread is
//! the handler's noise, and B is also predicted with its cost that much
//! higher (`lower_rps`).
//!
//! Each copy holds its first rate until two holds in a row cost the same
//! within [`STEADY`] (a JIT compiles, pools fill: a Spring copy cost 2.0 ms
//! a request in its first seconds, A 0.20 ms after its search), each hold
//! as long as A's step there lasted, at least [`MIN_HOLD`]. Neither A nor
//! B is loaded here: A's fit stays a black box's, and B is measured after,
//! by its own search.

use std::time::Duration;

use iolab_model::capacity::{CpuSource, Fit, Search, SearchStage, StepRecord};
use iolab_model::experiment::{RunSpec, Work};
use iolab_model::steps::BackendKind;
use iolab_model::whatif::{next_rate, Calibration, RateCost, SETTLED};
use iolab_model::Step;
use iolab_predict::fit::cpu;

use crate::capacity::preset::Bench;
use crate::capacity::Probe;

/// Most rates B's copy is measured at (each after the last prediction).
pub const ROUNDS: usize = 5;

/// How long a copy holds its first rate before it is measured.
pub const WARM_UP: Duration = Duration::from_secs(2);

/// Two holds in a row within this share of each other are steady.
pub const STEADY: f64 = 0.1;

/// Most holds before a copy's cost is called steady or given up.
pub const WARM_HOLDS: usize = 10;

/// Shortest measured hold.
pub const MIN_HOLD: Duration = Duration::from_secs(2);

/// A pair's two targets and A's search.
pub struct Pair<'a> {
    /// A's search and its fit.
    pub a: &'a Search,
    /// A's fit.
    pub fit: &'a Fit,
    /// A as the preset starts it.
    pub a_spec: &'a RunSpec,
    /// B as the preset starts it.
    pub b_spec: &'a RunSpec,
}

/// Calibrate B's cost; `predict` gives B's capacity (req/s) for a CPU per
/// request (ms). `None` when it cannot be: a foreign A or B (the lab has no
/// copy of it), no CPU reading, no prediction to start from.
pub fn run(
    bench: &Bench,
    p: &Pair,
    predict: &dyn Fn(f64) -> Option<f64>,
    say: &dyn Fn(&str),
) -> Result<Option<Calibration>, String> {
    let Some(source) = p.fit.cpu_source else {
        return Ok(None);
    };
    let wait = wait(p.fit.service_ms);
    let (Some(copy_a), Some(copy_b)) = (copy(p.a_spec, wait.clone()), copy(p.b_spec, wait.clone()))
    else {
        return Ok(None);
    };
    let uncalibrated = p.fit.cpu_per_request_ms.and_then(predict);
    let (Some(first), Some(top)) = (uncalibrated, top(&p.a.steps, source)) else {
        return Ok(None);
    };
    let hold = Duration::from_secs_f64(top.duration_s).max(MIN_HOLD);
    let a_rate = top.rate_rps;
    let Some(a) = a_costs(&p.a.steps, a_rate, source) else {
        return Ok(None);
    };
    let copy_costs = bench.with_probe(&copy_a, true, |probe, _| {
        Holds::on(bench, probe, hold, source).settled(a_rate, a.0)
    })??;
    let Some([c1, c2]) = copy_costs else {
        say(&format!(
            "whatif: {}'s copy answered nothing at {a_rate:.0}/s: not calibrated",
            p.a_spec.name
        ));
        return Ok(None);
    };
    let mut k = Calibration {
        wait: wait.to_string(),
        source,
        a_rate_rps: a_rate,
        a_ms: a.0,
        a_runtime_ms: c1.min(c2),
        noise_ms: a.1.max((c1 - c2).abs()),
        b_runtime: Vec::new(),
        uncalibrated_rps: uncalibrated,
        lower_rps: None,
    };
    say(&format!(
        "whatif: {} costs {:.3} ms a request at {a_rate:.0}/s, its runtime serving {wait} alone {:.3} ms (noise {:.3} ms)",
        p.a_spec.name, k.a_ms, k.a_runtime_ms, k.noise_ms
    ));
    let handler_ms = k.handler_ms();
    let said = |rate: f64, cost: &RateCost, predicted: Option<f64>| {
        say(&format!(
            "whatif: {}'s runtime serving {wait} at {rate:.0}/s: {} ms a request{}; B predicted at {}/s",
            p.b_spec.name,
            cost.ms.map_or("-".into(), |m| format!("{m:.3}")),
            if cost.met { "" } else { ", the objective failed" },
            predicted.map_or("-".into(), |n| format!("{n:.0}"))
        ))
    };
    k.b_runtime = bench.with_probe(&copy_b, true, |probe, _| {
        let b = |ms: f64| predict(handler_ms + ms);
        Holds::on(bench, probe, hold, source).rounds(first, &b, &said)
    })??;
    // Held, as the prediction is, to what B's copy holds.
    let cap = k.copy_capacity_rps().unwrap_or(f64::INFINITY);
    k.lower_rps = k
        .b_ms()
        .and_then(|b| predict(k.noise_ms + b))
        .map(|l| l.min(cap));
    Ok(Some(k))
}

/// A's highest passing step with a reading from `source`.
fn top(steps: &[StepRecord], source: CpuSource) -> Option<&StepRecord> {
    steps
        .iter()
        .filter(|s| s.passed && cpu::at(s, source).is_some())
        .max_by(|x, y| x.rate_rps.total_cmp(&y.rate_rps))
}

/// A's cost at `rate` (the least of its passing steps there: other work on
/// the core only ever adds to a reading) and the spread between them (0
/// with one), ms.
fn a_costs(steps: &[StepRecord], rate: f64, source: CpuSource) -> Option<(f64, f64)> {
    let costs: Vec<f64> = steps
        .iter()
        .filter(|s| s.passed && s.rate_rps == rate)
        .filter_map(|s| cpu::at(s, source))
        .collect();
    let lo = costs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = costs.iter().copied().fold(0.0, f64::max);
    (!costs.is_empty()).then_some((lo, hi - lo))
}

/// The fitted service time, waited: what a copy serves instead of the
/// handler.
fn wait(service_ms: f64) -> Step {
    let us = (service_ms * 1000.0).round().max(1.0) as u64;
    BackendKind::Sleep
        .timed_call(us)
        .map_or(Step::Cpu { terms: 0 }, Step::Io)
}

/// The lab's copy of a built-in target serving `steps`; `None` for a
/// foreign one (its own URL or command).
fn copy(spec: &RunSpec, steps: Step) -> Option<RunSpec> {
    let Work::Http(w) = &spec.work else {
        return None;
    };
    if w.foreign.is_some() || w.command.is_some() {
        return None;
    }
    let mut w = w.clone();
    w.steps = steps;
    Some(RunSpec {
        name: format!("{} (the lab's copy)", spec.name),
        work: Work::Http(w),
        ..spec.clone()
    })
}

/// Rates held against one copy.
struct Holds<'a> {
    bench: &'a Bench<'a>,
    probe: &'a Probe,
    hold: Duration,
    source: CpuSource,
}

impl<'a> Holds<'a> {
    fn on(bench: &'a Bench<'a>, probe: &'a Probe, hold: Duration, source: CpuSource) -> Self {
        Holds {
            bench,
            probe,
            hold,
            source,
        }
    }

    /// Hold `rate` until two holds in a row cost within [`STEADY`] of each
    /// other, or of `scale` ms when larger (a JIT has compiled, pools are
    /// full), at most [`WARM_HOLDS`] holds: the last two costs (their spread
    /// then says how steady they were); `None` if a hold answered nothing.
    fn settled(&self, rate: f64, scale: f64) -> Result<Option<[f64; 2]>, String> {
        self.step(rate, WARM_UP)?;
        let mut last = self.cost(rate)?.ms;
        for _ in 1..WARM_HOLDS {
            let now = self.cost(rate)?.ms;
            let (Some(a), Some(b)) = (last, now) else {
                return Ok(None);
            };
            let done = (a - b).abs() <= STEADY * b.max(scale);
            if done || self.bench.cancelled() {
                return Ok(Some([a, b]));
            }
            last = now;
        }
        Ok(last.zip(self.cost(rate)?.ms).map(|(a, b)| [a, b]))
    }

    /// B's copy from `first`: each rate's cost, then B predicted with it
    /// (`predict`), and the next rate, until the prediction settles, the
    /// copy is bracketed, or [`ROUNDS`] rates were held; `said` hears each.
    fn rounds(
        &self,
        first: f64,
        predict: &dyn Fn(f64) -> Option<f64>,
        said: &dyn Fn(f64, &RateCost, Option<f64>),
    ) -> Result<Vec<RateCost>, String> {
        let max_rps = self.bench.options.max_rps;
        let mut rate = first.min(max_rps);
        self.settled(rate, 0.0)?;
        let mut tried: Vec<RateCost> = Vec::new();
        for _ in 0..ROUNDS {
            let cost = self.cost(rate)?;
            tried.push(cost);
            let met = tried.iter().rev().filter(|r| r.met).find_map(|r| r.ms);
            let predicted = met.and_then(predict);
            said(rate, &cost, predicted);
            // Failed with nothing met yet: below it, by the bracket's rule.
            let Some(next) = predicted.or((!cost.met).then_some(rate)) else {
                break;
            };
            let next = next_rate(&tried, next).min(max_rps);
            if (next - rate).abs() <= SETTLED * rate || self.bench.cancelled() {
                break;
            }
            rate = next;
        }
        Ok(tried)
    }

    /// Hold `rate` and read the CPU per answered request.
    fn cost(&self, rate: f64) -> Result<RateCost, String> {
        let s = self.step(rate, self.hold)?;
        Ok(RateCost {
            rate_rps: rate,
            ms: cpu::at(&s, self.source),
            met: s.passed,
        })
    }

    fn step(&self, rate: f64, d: Duration) -> Result<StepRecord, String> {
        self.probe.step(self.bench.slo, rate, d, SearchStage::Ramp)
    }
}

#[cfg(test)]
mod tests {
    use iolab_model::attack::AttackResult;

    use super::*;

    /// A step at `rate`, answering all of it over 1 s, its core `busy`.
    fn step(rate: f64, passed: bool, busy: f64) -> StepRecord {
        let mut attack = AttackResult::default();
        attack.requests.ok = rate as u64;
        attack.elapsed_s = 1.0;
        StepRecord {
            rate_rps: rate,
            passed,
            core_busy_cores: Some(busy),
            attack,
            ..StepRecord::default()
        }
    }

    #[test]
    fn a_is_read_at_its_highest_passing_rate_with_the_spread_of_its_confirmations() {
        let a = vec![
            step(100.0, true, 0.05),
            step(400.0, false, 0.2),
            step(200.0, true, 0.11),
            step(200.0, true, 0.13),
            step(300.0, false, 0.15),
        ];
        assert_eq!(top(&a, CpuSource::Cores).unwrap().rate_rps, 200.0);
        let (least, spread) = a_costs(&a, 200.0, CpuSource::Cores).unwrap();
        // 0.11 and 0.13 cores at 200/s: 0.55 and 0.65 ms.
        assert!((least - 0.55).abs() < 1e-9 && (spread - 0.1).abs() < 1e-9);
        // Without the source's reading there is nothing to read.
        assert!(top(&a, CpuSource::Process).is_none());
        assert!(a_costs(&a, 200.0, CpuSource::Process).is_none());
    }

    #[test]
    fn a_copy_serves_the_fitted_wait_and_a_foreign_target_has_none() {
        assert_eq!(wait(100.4152).to_string(), "sleep:100.415");
        let (origin, text) = crate::preset::locate("whatif-rust-pool").unwrap();
        let plan = crate::preset::parse_plan(&text, &origin, Default::default()).unwrap();
        let spec = &plan.runs[0];
        let c = copy(spec, wait(100.4152)).unwrap();
        let Work::Http(w) = &c.work else {
            panic!("an HTTP copy")
        };
        assert_eq!(w.steps.to_string(), "sleep:100.415");
        assert_eq!((c.model, &c.params), (spec.model, &spec.params));
        let mut foreign = spec.clone();
        if let Work::Http(w) = &mut foreign.work {
            w.command = Some(vec!["./server".into()]);
        }
        assert!(copy(&foreign, wait(100.0)).is_none());
    }
}
