//! A capacity search of a replayed mix (`iolab capacity --replay FILE`):
//! each step sends the recorded mix as a Poisson stream ([`driver`]); with
//! an objective per endpoint ([`EndpointSlo`]) the bench is wrapped in a
//! [`MixBench`], which judges each endpoint's requests of a step against
//! its clauses and a rate's windows per endpoint pooled; after the search
//! [`fails_first`] names the endpoint that failed first and [`split`] where
//! each endpoint waited at the knee. Before the search, with the target's
//! PID, each endpoint's CPU per request is probed ([`cpu`]); after it,
//! [`finish`] records it with the share of its cores the target got at the
//! knee, names the endpoints using most of the CPU when it
//! binds first, and caps each what-if by the CPU ([`what_if`]). Measuring
//! only: the report crate says it in words.

use std::time::Duration;

use iolab_loadgen::Histogram;
use iolab_model::attack::EndpointResult;
use iolab_model::capacity::usl::SweepLevel;
use iolab_model::capacity::{
    CpuSource, EndpointObserved, EndpointSlo, EndpointVerdict, FirstFail, MixCpu, Observed, Search,
    SearchStage, Slo, StepRecord, Windows,
};
use iolab_model::driver::{Arrival, Driver, Phase};
use iolab_model::request::RequestSet;

use super::bench::{Bench, MachineWatch, StepError};
use super::windows;

pub mod cpu;
mod split;
mod what_if;
pub use split::{limits, split};
pub use what_if::{capped, what_if};

/// A step's driver at `rate` for `d`: a Poisson stream when a recorded mix
/// is sent (its requests arrive as a service's users' do), else evenly
/// spaced. Seeded by the rate, so a rate held again sends the same stream.
pub fn driver(request: &RequestSet, rate: f64, d: Duration) -> Driver {
    match request.mix {
        Some(_) => Driver::Open {
            phases: vec![Phase::hold(rate, d)],
            arrival: Arrival::Poisson {
                seed: rate.to_bits(),
            },
        },
        None => Driver::constant(rate, d),
    }
}

/// A replayed mix's search with its CPU per endpoint (`cpu`, probed before
/// it): recorded, the split named again with it, each what-if capped.
pub fn finish(search: &mut Search, cpu: MixCpu) {
    search.mix_cpu = Some(cpu.at_knee(cpu::got_at_knee(search)));
    search.endpoint_split = split(search);
    search.mix_what_if = what_if(search);
}

/// A bench whose steps are judged per endpoint of a replayed mix.
pub struct MixBench<'a> {
    /// The bench measured on (its steps carry the `endpoints` section).
    pub bench: &'a dyn Bench,
    /// The objective per endpoint.
    pub objective: &'a EndpointSlo,
}

impl Bench for MixBench<'_> {
    fn step(
        &self,
        slo: &Slo,
        rate: f64,
        duration: Duration,
        stage: SearchStage,
    ) -> Result<StepRecord, StepError> {
        let mut rec = self.bench.step(slo, rate, duration, stage)?;
        judge_step(&mut rec, self.objective);
        Ok(rec)
    }

    fn decide(&self, _slo: &Slo, tally: &Windows, windows: &[StepRecord]) -> Option<bool> {
        decide(self.objective, tally, windows)
    }

    fn recover(&self, failed: &StepRecord, slo: &Slo, quick: Duration) {
        self.bench.recover(failed, slo, quick)
    }

    fn settle(&self, quick: Duration) {
        self.bench.settle(quick)
    }

    fn unloaded_ms(&self) -> Option<f64> {
        self.bench.unloaded_ms()
    }

    fn closed(&self, clients: u32, d: Duration) -> Result<Option<SweepLevel>, StepError> {
        self.bench.closed(clients, d)
    }

    fn timeout(&self) -> Duration {
        self.bench.timeout()
    }

    fn cancelled(&self) -> bool {
        self.bench.cancelled()
    }

    fn target(&self) -> String {
        self.bench.target()
    }

    fn watch_machine(&self) -> Box<dyn MachineWatch + '_> {
        self.bench.watch_machine()
    }

    fn cpu_source(&self) -> CpuSource {
        self.bench.cpu_source()
    }
}

/// Judge `rec` per endpoint: its `endpoints` verdicts, and whether it
/// passed (the overall part over every request, every endpoint its own).
/// A late generator excuses a fail, as for a plain objective, only if the
/// fail goes away with every answer forgiven the generator's largest
/// lateness (per endpoint; the overall part's fail stands): the step is
/// then no verdict on the target.
pub fn judge_step(rec: &mut StepRecord, o: &EndpointSlo) {
    let (endpoints, judged) = verdict(rec, o, 0.0);
    rec.endpoints = endpoints;
    let late = rec.attack.generator.saturated;
    let excused =
        late && judged.is_err() && verdict(rec, o, rec.attack.generator.lag_max_ms).1.is_ok();
    rec.generator_saturated = excused;
    rec.passed = judged.is_ok();
    rec.verdict = match (judged, late, excused) {
        (Ok(()), false, _) => format!("meets {o}"),
        (Ok(()), true, _) => format!("meets {o} though the generator was late"),
        (Err(why), _, false) => why,
        (Err(why), _, true) => {
            format!("the generator was the bottleneck: no verdict on the target ({why})")
        }
    };
}

/// Every endpoint's verdict with each answer forgiven `forgive_ms`, and
/// the step's: the overall part first, then the first endpoint that missed.
fn verdict(
    rec: &StepRecord,
    o: &EndpointSlo,
    forgive_ms: f64,
) -> (Vec<EndpointVerdict>, Result<(), String>) {
    let endpoints: Vec<EndpointVerdict> = (rec.attack.endpoints.iter())
        .filter_map(|e| judge_endpoint(o, e, forgive_ms))
        .collect();
    let overall = o
        .overall
        .as_ref()
        .map_or(Ok(()), |s| windows::pooled(s, std::slice::from_ref(rec)));
    let missed = (endpoints.iter()).find_map(|v| {
        (v.miss.as_ref()).map(|m| format!("{} {}: {}", v.method, v.template, m.text))
    });
    let judged = match (overall, missed) {
        (Err(why), _) => Err(why),
        (Ok(()), Some(why)) => Err(why),
        (Ok(()), None) => Ok(()),
    };
    (endpoints, judged)
}

/// One endpoint's requests of a step against its clauses, each answer
/// forgiven `forgive_ms` (`None`: it has none, or its histogram does not
/// decode).
fn judge_endpoint(o: &EndpointSlo, e: &EndpointResult, forgive_ms: f64) -> Option<EndpointVerdict> {
    let h: Histogram<u64> = match &e.histogram {
        Some(b64) => iolab_loadgen::shard::hist::decode_base64(b64).ok()?,
        None => Histogram::new(3).ok()?,
    };
    let within = |ms: f64| h.count_between(0, ((ms + forgive_ms) * 1000.0) as u64);
    let quantile = |q: f64| quantile_ms(&h, e.sent, q).map(|v| (v - forgive_ms).max(0.0));
    o.judge(
        &e.method,
        &e.template,
        &EndpointObserved {
            planned: e.sent,
            ok: e.ok,
            answered_within: &within,
            quantile_ms: &quantile,
        },
    )
}

/// The latency below which a share `q` of `planned` requests were
/// answered, ms (an unanswered one is later than any): `None` when fewer
/// were answered.
fn quantile_ms(h: &Histogram<u64>, planned: u64, q: f64) -> Option<f64> {
    let rank = (q * planned as f64).ceil().max(1.0);
    let answered = h.len() as f64;
    (rank <= answered).then(|| h.value_at_quantile(rank / answered) as f64 / 1000.0)
}

/// A rate's decision from its windows, as [`windows::decide`] makes it,
/// with the pooled requests judged per endpoint.
pub fn decide(o: &EndpointSlo, tally: &Windows, ws: &[StepRecord]) -> Option<bool> {
    match tally.decided() {
        Some(true) => Some(true),
        Some(false) if !pooled(o, ws, true) => Some(false),
        Some(false) => tally.full().then(|| pooled(o, ws, false)),
        None => None,
    }
}

/// Every part of `o` over the windows' requests pooled (each endpoint's
/// together); `loose`: each clause's allowed misses doubled.
fn pooled(o: &EndpointSlo, ws: &[StepRecord], loose: bool) -> bool {
    let read = |s: &Slo| match loose {
        true => windows::loosened(s),
        false => s.clone(),
    };
    if let Some(s) = &o.overall {
        if windows::pooled(&read(s), ws).is_err() {
            return false;
        }
    }
    let Some(first) = ws.first() else { return true };
    first.endpoints.iter().all(|v| {
        let Some(slo) = o.for_endpoint(&v.method, &v.template) else {
            return true;
        };
        let same = || {
            (ws.iter().flat_map(|w| &w.endpoints))
                .filter(|x| x.method == v.method && x.template == v.template)
        };
        let planned: u64 = same().map(|x| x.sent).sum();
        let ok: u64 = same().map(|x| x.ok).sum();
        let within = |ms: f64| -> u64 {
            (same().flat_map(|x| &x.within))
                .filter(|w| (w.below_ms - ms).abs() < 1e-9)
                .map(|w| w.answered)
                .sum()
        };
        read(slo)
            .judge(&Observed {
                planned,
                success: if planned == 0 {
                    0.0
                } else {
                    ok as f64 / planned as f64
                },
                answered_within: &within,
            })
            .is_ok()
    })
}

/// The endpoint that failed its clauses first: at the lowest rate that
/// failed, of its failed steps' endpoints the one that missed by the most.
pub fn fails_first(search: &Search) -> Option<FirstFail> {
    let rate = search.failed_rps?;
    let failed =
        (search.steps.iter()).filter(|s| s.rate_rps == rate && !s.passed && !s.generator_saturated);
    let (step, v, m) = failed
        .flat_map(|s| (s.endpoints.iter()).filter_map(move |v| v.miss.as_ref().map(|m| (s, v, m))))
        .max_by(|a, b| a.2.by.total_cmp(&b.2.by))?;
    let share = (step.attack.endpoints.iter())
        .find(|e| e.method == v.method && e.template == v.template)
        .map_or(0.0, |e| e.share);
    Some(FirstFail {
        method: v.method.clone(),
        template: v.template.clone(),
        share,
        rate_rps: rate,
        miss: m.clone(),
    })
}

#[cfg(test)]
mod tests;
