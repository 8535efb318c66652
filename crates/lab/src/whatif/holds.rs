//! Rates held against one of the lab's copies ([`super::calibrate`]): a
//! warm-up, then holds until two in a row cost alike, or rounds of B's
//! copy at each new prediction.

use std::time::Duration;

use iolab_model::capacity::{CpuSource, SearchStage, StepRecord};
use iolab_model::whatif::{next_rate, RateCost, SETTLED};
use iolab_predict::fit::cpu;

use super::calibrate::{ROUNDS, WARM_HOLDS};
use crate::capacity::preset::Bench;
use crate::capacity::warm::{Warm, STEADY};
use crate::capacity::Probe;

/// Rates held against one copy.
pub struct Holds<'a> {
    bench: &'a Bench<'a>,
    probe: &'a Probe,
    hold: Duration,
    source: CpuSource,
}

impl<'a> Holds<'a> {
    pub fn on(bench: &'a Bench<'a>, probe: &'a Probe, hold: Duration, source: CpuSource) -> Self {
        Holds {
            bench,
            probe,
            hold,
            source,
        }
    }

    /// Serve `warm_requests` at half `rate` (where no queue builds: a copy
    /// at A's rate can be at its own capacity, and a full-size Ruby copy
    /// warmed there answered nothing within the timeout), then hold `rate`
    /// until two holds in a row cost within [`STEADY`] of each other, or of
    /// `scale` ms when larger (a JIT has compiled, pools are full), at most
    /// [`WARM_HOLDS`] holds: every hold measured, in order (the last two's
    /// spread says how steady they were); it stops at a hold that answered
    /// nothing.
    pub fn settled(
        &self,
        rate: f64,
        warm_requests: f64,
        scale: f64,
    ) -> Result<Vec<RateCost>, String> {
        let warm = Warm {
            requests: warm_requests,
            rate: rate / 2.0,
        };
        warm.serve(self.probe, self.bench.slo)?;
        let mut holds = vec![self.cost(rate)?];
        while holds.len() < WARM_HOLDS && !self.bench.cancelled() {
            let now = self.cost(rate)?;
            holds.push(now);
            let [a, b] = [holds[holds.len() - 2].ms, now.ms];
            let (Some(a), Some(b)) = (a, b) else {
                break;
            };
            if (a - b).abs() <= STEADY * b.max(scale) {
                break;
            }
        }
        Ok(holds)
    }

    /// `n` holds at `rate`, no warm-up (the probe's target is warm): every
    /// hold, in order.
    pub fn again(&self, rate: f64, n: usize) -> Result<Vec<RateCost>, String> {
        let mut holds = Vec::with_capacity(n);
        while holds.len() < n && !self.bench.cancelled() {
            holds.push(self.cost(rate)?);
        }
        Ok(holds)
    }

    /// B's copy from `first`: each rate's cost, then B predicted with it
    /// (`predict`), and the next rate, until the prediction settles, the
    /// copy is bracketed, or [`ROUNDS`] rates were held; `said` hears each.
    pub fn rounds(
        &self,
        first: f64,
        warm_requests: f64,
        predict: &dyn Fn(f64) -> Option<f64>,
        said: &dyn Fn(f64, &RateCost, Option<f64>),
    ) -> Result<Vec<RateCost>, String> {
        let max_rps = self.bench.options.max_rps;
        let mut rate = first.min(max_rps);
        self.settled(rate, warm_requests, 0.0)?;
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

    /// Hold `rate` and read the CPU per answered request (and the cores'
    /// beside the process tree's).
    fn cost(&self, rate: f64) -> Result<RateCost, String> {
        let s = self.step(rate, self.hold)?;
        let cores = (self.source == CpuSource::Process)
            .then(|| cpu::at(&s, CpuSource::Cores))
            .flatten();
        Ok(RateCost {
            rate_rps: rate,
            ms: cpu::at(&s, self.source),
            cores_ms: cores,
            met: s.passed,
        })
    }

    fn step(&self, rate: f64, d: Duration) -> Result<StepRecord, String> {
        self.probe.step(self.bench.slo, rate, d, SearchStage::Ramp)
    }
}
