//! A's cost per request at its capacity, where the handler's
//! work is read ([`super::calibrate`]): from its search's steps there, or
//! from A itself held again after its search, warm (`Calibration::a_warm`).
//!
//! A's search warms A as it measures it: a Spring A at CI size read 8.6 ms
//! a request at its first step, 6.2 at its second and 2.1-2.3 at its
//! capacity, while B, warmed before its own search (`warm_b`), read 1.3
//! from its first rates on. A's cost read from its search counted its JIT's
//! work as the handler's, and B was predicted 23% low. So, its search done
//! and A still running, A is sent its runtime's own `warmup` (what its
//! launcher sends a fresh one; B is sent at least that and A's count) at
//! half its capacity, 2-30 s, then held at that rate until two holds cost
//! alike ([`Holds::settled`]). It stays a black box's reading: the load
//! and its process tree's CPU. Not A's search's count again: the two
//! CI-size Rust pairs' test took 274 s so, against 153 s before, for a
//! runtime with no JIT to warm.

use std::time::Duration;

use iolab_model::capacity::{CpuSource, Search, StepRecord};
use iolab_model::whatif::{last_two_met, RateCost};

use iolab_predict::fit::cpu;

use super::holds::{Holds, MIN_HOLD};
use crate::preset::Rig;
use crate::warm::Warm;
use crate::Probe;

/// A's warm holds and how many requests it had answered by their end.
#[derive(Debug, Clone, PartialEq)]
pub struct AWarm {
    /// Every hold at A's capacity, in order.
    pub holds: Vec<RateCost>,
    /// Requests A answered in all: its search, the warm-up, the holds.
    pub answered: f64,
}

impl AWarm {
    /// A's cost from its last two holds (the lesser) and their spread, ms;
    /// `None` unless both met the objective (a hold past A's capacity
    /// reads a collapsing server's CPU over its few answers).
    pub fn cost(&self) -> Option<(f64, f64)> {
        last_two_met(&self.holds)
    }
}

/// Where A's cost is read, for its warm holds and its copy's alike.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// A's capacity, or its highest passing rate ([`top`]).
    pub rate: f64,
    /// Whose CPU is read ([`calibration_source`]).
    pub source: CpuSource,
    /// How long each hold lasts: A's step at that rate, at least
    /// [`MIN_HOLD`].
    pub hold: Duration,
}

impl Reading {
    /// `None` without a CPU reading at a passing rate.
    pub fn of(a: &Search) -> Option<Reading> {
        let source = a.fit.as_ref()?.cpu_source?;
        let top = top(&a.steps, a.capacity_rps, source)?;
        Some(Reading {
            rate: top.rate_rps,
            source: calibration_source(&a.steps, top.rate_rps, source),
            hold: Duration::from_secs_f64(top.duration_s).max(MIN_HOLD),
        })
    }
}

/// Warm A (`probe`, its search `a` just done) by `runtime_warmup` (its
/// runtime's own count, 0 for none), then hold its capacity until steady;
/// `None` without a CPU reading to hold it by.
pub fn warm_a(
    rig: &Rig,
    probe: &Probe,
    a: &Search,
    runtime_warmup: f64,
) -> Result<Option<AWarm>, String> {
    let Some(at) = Reading::of(a) else {
        return Ok(None);
    };
    let searched: f64 = a
        .steps
        .iter()
        .map(|s| s.attack.requests.answered() as f64)
        .sum();
    let holds = Holds::on(rig, probe, at.hold, at.source).settled(at.rate, runtime_warmup, 0.0)?;
    let warm = Warm {
        requests: runtime_warmup,
        rate: at.rate / 2.0,
    };
    let sent = warm.length().as_secs_f64() * warm.rate;
    let held = holds.len() as f64 * at.hold.as_secs_f64() * at.rate;
    Ok(Some(AWarm {
        holds,
        answered: searched + sent + held,
    }))
}

/// Requests A answered in its search before its last passing step at
/// `rate` (where its cost was read): a copy serves as many first. A JIT
/// compiles by count, in stages: a Spring copy warmed 2 s at 106/s cost
/// 3.1 ms a request for two holds in a row (steady, by the rule), then fell
/// to 0.9 over the next eight, where A had cost 1.25 after its search.
pub fn answered_before(steps: &[StepRecord], rate: f64) -> f64 {
    let last = steps
        .iter()
        .rposition(|s| s.passed && s.rate_rps == rate)
        .unwrap_or(0);
    steps[..last]
        .iter()
        .map(|s| s.attack.requests.answered() as f64)
        .sum()
}

/// Where A's cost is read: its last passing step at its `capacity` (the
/// rate it passed twice), else its highest passing step, with a reading
/// from `source`. A rate passed once and failed after is at A's edge: a
/// Ruby A passed 45/s, then failed it, and held there again warm failed
/// one hold of four.
pub fn top(steps: &[StepRecord], capacity: Option<f64>, source: CpuSource) -> Option<&StepRecord> {
    let passing = || {
        steps
            .iter()
            .filter(|s| s.passed && cpu::at(s, source).is_some())
    };
    capacity
        .and_then(|c| passing().rfind(|s| s.rate_rps == c))
        .or_else(|| passing().max_by(|x, y| x.rate_rps.total_cmp(&y.rate_rps)))
}

/// A's cost at `rate` (the least of its passing steps there: other work on
/// the core only ever adds to a reading) and the spread between them (0
/// with one), ms.
pub fn a_costs(steps: &[StepRecord], rate: f64, source: CpuSource) -> Option<(f64, f64)> {
    let costs: Vec<f64> = steps
        .iter()
        .filter(|s| s.passed && s.rate_rps == rate)
        .filter_map(|s| cpu::at(s, source))
        .collect();
    let lo = costs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = costs.iter().copied().fold(0.0, f64::max);
    (!costs.is_empty()).then_some((lo, hi - lo))
}

/// Whose CPU the calibration reads (`Calibration::source` says why): the
/// process trees when A's steps at `rate` have their reading, else the
/// fit's `source`.
pub fn calibration_source(steps: &[StepRecord], rate: f64, source: CpuSource) -> CpuSource {
    let process = CpuSource::Process;
    let mut at_rate = steps.iter().filter(|s| s.passed && s.rate_rps == rate);
    if at_rate.all(|s| cpu::at(s, process).is_some()) {
        process
    } else {
        source
    }
}

#[cfg(test)]
pub(super) mod tests {
    use iolab_model::attack::AttackResult;

    use super::*;

    /// A step at `rate`, answering all of it over 1 s, its core `busy`.
    pub fn step(rate: f64, passed: bool, busy: f64) -> StepRecord {
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
        assert_eq!(top(&a, None, CpuSource::Cores).unwrap().rate_rps, 200.0);
        // A rate passed once, then failed, is not where A is read.
        let mut edge = a.clone();
        edge.push(step(250.0, true, 0.14));
        edge.push(step(250.0, false, 0.15));
        assert_eq!(top(&edge, None, CpuSource::Cores).unwrap().rate_rps, 250.0);
        let at = top(&edge, Some(200.0), CpuSource::Cores).unwrap();
        assert_eq!(at.rate_rps, 200.0);
        let (least, spread) = a_costs(&a, 200.0, CpuSource::Cores).unwrap();
        // 0.11 and 0.13 cores at 200/s: 0.55 and 0.65 ms.
        assert!((least - 0.55).abs() < 1e-9 && (spread - 0.1).abs() < 1e-9);
        // Without the source's reading there is nothing to read.
        assert!(top(&a, Some(200.0), CpuSource::Process).is_none());
        assert!(a_costs(&a, 200.0, CpuSource::Process).is_none());
    }

    #[test]
    fn r31_08_a_copy_serves_as_many_requests_as_a_had_before_it_is_read() {
        // A Spring copy warmed 2 s at 106/s read 3.1 ms twice in a row (a
        // JIT's plateau), where A, read after its search, cost 1.25.
        let a = vec![
            step(50.0, true, 0.1),
            step(100.0, true, 0.1),
            step(200.0, false, 0.1),
            step(100.0, true, 0.1),
        ];
        // Each step answered its rate over 1 s: 350 before the last at 100/s.
        assert_eq!(answered_before(&a, 100.0), 350.0);
    }

    fn hold(ms: f64, met: bool) -> RateCost {
        RateCost {
            rate_rps: 106.0,
            ms: Some(ms),
            cores_ms: None,
            met,
        }
    }

    #[test]
    fn r31_13_a_is_read_from_its_last_two_warm_holds_when_both_met() {
        // jp1 (CI size): the Spring A's search read 2.08 and 2.25 ms a
        // request at 106/s, still compiling; warm holds fall below that.
        let w = |holds| AWarm {
            holds,
            answered: 5000.0,
        };
        let (least, spread) = w(vec![hold(1.9, true), hold(1.5, true), hold(1.4, true)])
            .cost()
            .unwrap();
        assert!((least - 1.4).abs() < 1e-9 && (spread - 0.1).abs() < 1e-9);
        // A hold past its capacity is not read: the search's steps are.
        assert_eq!(w(vec![hold(1.5, true), hold(3.0, false)]).cost(), None);
        assert_eq!(w(vec![hold(1.5, true)]).cost(), None);
    }
}
