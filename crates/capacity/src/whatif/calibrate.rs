//! What a request costs under B's runtime, measured before B is (a
//! counterfactual's `calibration`). A black-box fit reads A's CPU per
//! request at A's rates. That cost is the handler's own work plus what A's
//! runtime and model spend to carry a request (accept, parse, wake a
//! thread, switch, write), and the second part belongs to the runtime and
//! the rate, not to the work: on one core, Spring MVC held 525/s, virtual
//! threads 1,600/s and WebFlux 3,700/s of the same `sleep:400`, and every
//! quiet pair predicted beyond twice A's rates missed by 21-79%
//! (docs/capacity.md). So the lab reads copies of A's runtime and model
//! and of B's, each serving only a wait (its length below). A copy is the
//! target's own process sent the wait in place of its steps (a built-in
//! target's `/work` takes them in the query): the same runtime, model and
//! knobs, already started. Separate copies cost a pair two more starts
//! and warm-ups, a minute and a half for a JVM pair at CI size.
//!
//! - A's copy at A's capacity, after A's search and warm holds, then A
//!   itself twice more, as warm as its copy now is (a JIT compiles in
//!   stages: `Calibration::a_again`): A's cost there less its copy's is
//!   the handler's own work, which B keeps.
//! - B's copy at the rate B is predicted to hold, before B's search: what
//!   B's runtime adds there. B's rate depends on its cost (the handler's
//!   work plus that), so B is predicted again with it and its copy
//!   measured again at the new
//!   rate, until the prediction moves by less than [`SETTLED`] (at most
//!   [`ROUNDS`](super::holds::ROUNDS) rates). A rate the copy fails the objective at is not read;
//!   B, doing that and more, is held to what the copy holds there.
//!
//! The wait is [`COPY_WAIT`] of the fitted one (S less the fitted CPU):
//!
//! - Not all of S: a copy waiting it, plus its own cost, holds as many
//!   requests at once as A's binding allows at A's highest rate, at its own
//!   capacity. Copies so held failed the objective in most CI runs and
//!   their CPU per answered request swung: 0.25-2.01 ms over six runs of
//!   one rust pool pair, 1.876 ms in a Ruby run where others read
//!   0.35-0.80 (B then predicted 39% high).
//! - Not all of the wait either: a Ruby copy at 42.5/s waiting S less the
//!   CPU met the objective with no headroom for a generator's late
//!   requests. At nine tenths of it, and at three quarters, every copy of
//!   the CI-size pairs met it (11 of 11 runs), and what a copy read moved
//!   with the run, not with its wait (Ruby: 0.55-0.73 ms a request waiting
//!   all of it, 0.78-0.90 at three quarters, 0.88 and 1.25 at nine
//!   tenths), as A's own cost did.
//!
//! Both copies serve only the wait: the handler's work is added in
//! milliseconds, not as `cpu:` terms, which each runtime computes at its
//! own speed (CPython's about a hundred times the Rust target's; even the
//! Rust copy did `cpu:N` 13% faster than the constant the lab converts
//! with, and a quiet `whatif-cpu` copy serving the fitted request that way
//! read 20% high).
//!
//! A and both copies are read from their process trees' CPU-time clocks,
//! less their JIT's compiler threads' (telemetry/jit.rs), when A's steps
//! have them (`Calibration::source` says why): the pinned
//! cores carry other work, and count their busy time in ticks (from the
//! cores, CI runs read a copy at 2-3 times its quiet cost and over-predicted
//! B by 65% and 108%). A's copy is measured once per pair ([`a_side`]), for every B
//! ([`b_side`]).
//!
//! A's cost and its copy's are each read twice at that rate (A's search
//! confirms its answer; the copy's two steady holds): the larger spread is
//! the handler's noise, and B is also predicted with its cost that much
//! higher (`lower_rps`).
//!
//! B's copy, a fresh process, is first warmed as A was when its cost was
//! read ([`Warm`](crate::warm::Warm): as many requests as A had
//! answered, less the waits B's launcher sent it itself (its runtime's
//! `warmup`, `sleep:1`: the copy's own path), at half the rate the copy is
//! then held at); A's, warm already, the shortest warm-up. Each then
//! holds its first rate until two holds in a row cost the same within
//! [`STEADY`](crate::warm::STEADY) (pools fill, a JIT's later
//! stages: a Spring copy cost 2.0 ms a request in its first seconds, A
//! 0.20 ms after its search), each hold as long as A's step there lasted,
//! at least [`MIN_HOLD`](super::holds::MIN_HOLD). A's fit stays a black box's (its copy is read
//! after it), and B is measured after its copy, by its own search (warmed
//! first on its own request: `warm_b` in the module above).

use std::time::Duration;

use iolab_model::capacity::{Fit, Search};
use iolab_model::steps::BackendKind;
use iolab_model::whatif::{last_two_met, Calibration, RateCost};
use iolab_model::Step;
use iolab_predict::fit::waited_ms;

use super::a_cost::{a_costs, answered_before, AWarm, Reading};
use super::holds::Holds;
use crate::preset::Rig;
use crate::Probe;

/// The share of the fitted wait a copy serves (the module's header says
/// why).
pub const COPY_WAIT: f64 = 0.9;

/// A's side of a pair's calibration: its copy, measured once for every B.
pub struct ASide {
    /// The calibration so far (B's side empty).
    k: Calibration,
    /// What the copies serve in place of the handler.
    wait: Step,
    /// How long each measured hold lasts (A's step there).
    hold: Duration,
    /// Requests B's copy serves before it is measured: as many as A had
    /// answered when its cost was read.
    warm_requests: f64,
    /// A's CPU per request as the fit read it, ms.
    fitted_ms: Option<f64>,
}

/// Measure A's copy at A's capacity: the handler's work (A's
/// cost from its warm holds when they read it, else from its search).
/// The copy is A's own process, its search and warm holds done, sent only
/// the wait (`probe` is A's): it is as warm as A was when its cost was
/// read, where a copy started fresh had to be warmed as long again (half
/// a minute for a JVM, with its start). `None` when it cannot be: a
/// foreign A (the lab has no copy of it), no CPU reading, a copy that
/// answered nothing.
pub fn a_side(
    rig: &Rig,
    probe: &Probe,
    a: &Search,
    warm: Option<&AWarm>,
    name: &str,
    say: &dyn Fn(&str),
) -> Result<Option<ASide>, String> {
    let (Some(fit), Some(at)) = (a.fit.as_ref(), Reading::of(a)) else {
        return Ok(None);
    };
    let wait = copy_wait(fit);
    let Some(copy_a) = probe.serving(&wait) else {
        return Ok(None);
    };
    let (a_rate, source) = (at.rate, at.source);
    let Some(cost) = warm
        .and_then(AWarm::cost)
        .or_else(|| a_costs(&a.steps, a_rate, source))
    else {
        return Ok(None);
    };
    let warm_requests = warm.map_or_else(|| answered_before(&a.steps, a_rate), |w| w.answered);
    // Warm already: the shortest warm-up, to let A's own load drain.
    let holds = Holds::on(rig, &copy_a, at.hold, source).settled(a_rate, 0.0, cost.0)?;
    let Some([c1, c2]) = last_two(&holds) else {
        say(&format!(
            "whatif: {name}'s copy answered nothing at {a_rate:.0}/s: not calibrated"
        ));
        return Ok(None);
    };
    // A again, as warm as its copy now is (`Calibration::a_again`).
    let again = Holds::on(rig, probe, at.hold, source).again(a_rate, 2)?;
    let cost = last_two_met(&again).unwrap_or(cost);
    let k = Calibration {
        wait: wait.to_string(),
        source,
        a_rate_rps: a_rate,
        a_ms: cost.0,
        a_warm: warm.map(|w| w.holds.clone()).unwrap_or_default(),
        a_again: again,
        a_answered: Some(warm_requests),
        a_runtime_ms: c1.min(c2),
        a_runtime: holds,
        noise_ms: cost.1.max((c1 - c2).abs()),
        b_runtime: Vec::new(),
        uncalibrated_rps: None,
        lower_rps: None,
    };
    say(&format!(
        "whatif: {name} costs {:.3} ms a request at {a_rate:.0}/s ({}, {warm_requests:.0} requests answered before its copy), its runtime serving {wait} alone {:.3} ms (noise {:.3} ms)",
        k.a_ms,
        if k.a_read_again() {
            "held again after its copy"
        } else if k.a_read_warm() {
            "held again warm"
        } else {
            "in its search"
        },
        k.a_runtime_ms,
        k.noise_ms
    ));
    Ok(Some(ASide {
        k,
        wait,
        hold: at.hold,
        warm_requests,
        fitted_ms: fit.cpu_per_request_ms,
    }))
}

/// Calibrate B's cost from A's side; `predict` gives B's capacity (req/s)
/// for a CPU per request (ms). B's copy is B's own process (`probe`),
/// before its search, sent only the wait, first `owed(A's count)` of them
/// to warm it (less the waits its launcher had sent it). `None` when it
/// cannot be: a foreign B, no prediction to start from.
pub fn b_side(
    rig: &Rig,
    side: &ASide,
    (probe, owed): (&Probe, &dyn Fn(f64) -> f64),
    name: &str,
    predict: &dyn Fn(f64) -> Option<f64>,
    say: &dyn Fn(&str),
) -> Result<Option<Calibration>, String> {
    let uncalibrated = side.fitted_ms.and_then(predict);
    let (Some(copy_b), Some(first)) = (probe.serving(&side.wait), uncalibrated) else {
        return Ok(None);
    };
    let mut k = Calibration {
        uncalibrated_rps: uncalibrated,
        ..side.k.clone()
    };
    let handler_ms = k.handler_ms();
    let said = |rate: f64, cost: &RateCost, predicted: Option<f64>| {
        say(&format!(
            "whatif: {name}'s runtime serving {} at {rate:.0}/s: {} ms a request{}; B predicted at {}/s",
            side.wait,
            cost.ms.map_or("-".into(), |m| format!("{m:.3}")),
            if cost.met { "" } else { ", the objective failed" },
            predicted.map_or("-".into(), |n| format!("{n:.0}"))
        ))
    };
    let b = |ms: f64| predict(handler_ms + ms);
    let holds = Holds::on(rig, &copy_b, side.hold, k.source);
    k.b_runtime = holds.rounds(first, owed(side.warm_requests), &b, &said)?;
    // Held, as the prediction is, to what B's copy holds.
    let cap = k.copy_capacity_rps().unwrap_or(f64::INFINITY);
    k.lower_rps = k
        .b_ms()
        .and_then(|b| predict(k.noise_ms + b))
        .map(|l| l.min(cap));
    Ok(Some(k))
}

/// The last two holds' costs; `None` when either has none.
fn last_two(holds: &[RateCost]) -> Option<[f64; 2]> {
    match holds {
        [.., a, b] => Some([a.ms?, b.ms?]),
        _ => None,
    }
}

/// What a copy serves instead of the handler: [`COPY_WAIT`] of the fitted
/// wait, slept.
fn copy_wait(fit: &Fit) -> Step {
    wait(COPY_WAIT * waited_ms(fit))
}

/// `ms` slept.
fn wait(waited_ms: f64) -> Step {
    let us = (waited_ms * 1000.0).round().max(1.0) as u64;
    BackendKind::Sleep
        .timed_call(us)
        .map_or(Step::Cpu { terms: 0 }, Step::Io)
}

#[cfg(test)]
mod tests {
    use iolab_model::capacity::{CpuSource, StepRecord};

    use super::super::a_cost::tests::step;
    use super::super::a_cost::{a_costs, calibration_source};
    use super::*;

    #[test]
    fn r31_07_a_copy_read_from_a_busy_core_does_not_shrink_the_handler() {
        // ci10: a pool(4) copy read 0.892 ms a request from its core at
        // 93.8/s (quiet: 0.26-0.53) while its process read about 0.1: the
        // calibration reads the processes when A's steps have them.
        let mut a = vec![step(100.0, true, 0.25), step(100.0, true, 0.24)];
        for s in &mut a {
            s.cpu_cores = Some(0.20);
        }
        let cores = CpuSource::Cores;
        assert_eq!(calibration_source(&a, 100.0, cores), CpuSource::Process);
        assert_eq!(a_costs(&a, 100.0, CpuSource::Process), Some((2.0, 0.0)));
        let hold = |ms: f64| RateCost {
            rate_rps: 100.0,
            ms: Some(ms),
            cores_ms: Some(0.9),
            met: true,
        };
        assert_eq!(last_two(&[hold(0.098), hold(0.147)]), Some([0.098, 0.147]));
        assert_eq!(last_two(&[hold(0.098)]), None);
        // Without the process's reading at that rate, the fit's own source.
        a[1].cpu_cores = None;
        assert_eq!(calibration_source(&a, 100.0, cores), cores);
    }

    #[test]
    fn r31_12_a_copy_at_as_highest_rate_is_not_at_its_own_capacity() {
        // CI: Thin, one request at a time, 25.4 ms of service (2.8 ms of
        // CPU), passed 42.5/s; its copy slept all 25.4 ms, held 1.08 at
        // once, failed the objective and read 1.876 ms a request (others
        // 0.35-0.80): B predicted 39% high.
        let mut a: Vec<StepRecord> = [10.0, 20.0, 42.5]
            .iter()
            .map(|r| step(*r, true, r * 2.81e-3))
            .collect();
        for s in &mut a {
            s.attack.service_ms.p50 = 25.36;
            s.cpu_cores = s.core_busy_cores;
            s.cpu_per_request_ms = Some(2.81);
        }
        let f = iolab_predict::fit::fit(&a, 42.5, 1).unwrap();
        let Step::Io(call) = copy_wait(&f) else {
            panic!("a wait")
        };
        let held = 42.5 * call.micros().unwrap() as f64 * 1e-6;
        assert!(held < 0.9, "{held} held at once by a server that holds 1");
    }

    #[test]
    fn a_copy_is_its_target_sent_only_the_wait_and_a_foreign_target_has_none() {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;

        use iolab_model::driver::ConnectionMode;
        use iolab_model::request::RequestSet;

        assert_eq!(wait(100.4152).to_string(), "sleep:100.415");
        let base = "http://127.0.0.1:9";
        let a = Probe {
            url: format!("{base}/work?steps=seq(cpu:1000,sleep:100)"),
            request: RequestSet::default(),
            timeout: Duration::from_secs(1),
            connections: ConnectionMode::KeepAlive { max: 64 },
            gen_cpus: vec![1],
            target_cpus: vec![0],
            pid: Some(42),
            metrics: None,
            cancel: Arc::new(AtomicBool::new(false)),
            live: None,
            work_base: Some(base.into()),
        };
        let copy = a.serving(&wait(100.4152)).unwrap();
        assert_eq!(copy.url, format!("{base}/work?steps=sleep:100.415"));
        // The same process, read the same way.
        assert_eq!((copy.pid, &copy.target_cpus), (a.pid, &a.target_cpus));
        let foreign = Probe {
            work_base: None,
            ..a
        };
        assert!(foreign.serving(&wait(100.0)).is_none());
    }
}
