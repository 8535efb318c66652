//! B as the fit of A predicts it ([`Predictor`]), and the change in the
//! words of B's runtime's own configuration ([`change_words`]).

use iolab_model::capacity::{Fit, Search, Slo, WhatIf};
use iolab_model::experiment::RunSpec;
use iolab_model::runtime::{Runtime, RuntimeKnobs};
use iolab_model::{ModelKind, ModelParams};
use iolab_predict::fit::costing;
use iolab_predict::whatif::{simulate, Change, Replay};

use crate::preset::Rig;
use crate::step_length;
use iolab_lab::targets::Defaults;

/// B as the fit of A predicts it: the fitted network on B's model with its
/// runtime's defaults on the target's cores, searched under the objective
/// on the simulation at A's measured rates, for a given CPU per request.
pub(super) struct Predictor<'a> {
    pub(super) fit: &'a Fit,
    model: ModelKind,
    params: ModelParams,
    cores: u32,
    gil: bool,
    runtime: Runtime,
    /// The change in words.
    pub(super) words: String,
    rates: Vec<f64>,
    step: std::time::Duration,
    timeout: std::time::Duration,
    slo: &'a Slo,
}

impl<'a> Predictor<'a> {
    /// `None` without a fit, a capacity, or HTTP work.
    pub(super) fn of(rig: &'a Rig, a: &'a Search, b: &RunSpec) -> Option<Predictor<'a>> {
        let (fit, capacity) = (a.fit.as_ref()?, a.capacity_rps?);
        let iolab_model::experiment::Work::Http(w) = &b.work else {
            return None;
        };
        let cores = rig.options.cores;
        let defaults = Defaults::of(b);
        Some(Predictor {
            fit,
            model: b.model,
            params: defaults.effective(b, cores),
            cores,
            gil: defaults.host(cores).gil,
            runtime: b.runtime.clone(),
            words: change_words(b, &defaults.knobs(b, cores)),
            rates: a.steps.iter().map(|s| s.rate_rps).collect(),
            step: step_length(rig.slo, w.timeout, fit.service_ms, &rig.options, capacity),
            timeout: w.timeout,
            slo: rig.slo,
        })
    }

    /// B simulated with each request costing `cpu_ms` of CPU.
    pub(super) fn at(&self, cpu_ms: f64) -> WhatIf {
        let net = costing(self.fit, cpu_ms)
            .on(self.model, self.params.clone(), self.cores)
            .with_gil(self.gil);
        let change = Change {
            change: self.words.clone(),
            network: net,
            fitted: false,
            runtime: self.runtime.clone(),
            cannot_say: None,
        };
        simulate(
            &change,
            &Replay {
                rates: &self.rates,
                step: self.step,
                timeout: self.timeout,
                slo: self.slo,
            },
        )
    }
}

/// `jvm loop-async: spring.netty loops 4 (max(cores, 4), its default)`:
/// the change as its runtime's own configuration says it.
pub(super) fn change_words(b: &RunSpec, knobs: &RuntimeKnobs) -> String {
    // The knobs the model's hold reads, and any the preset set (a pool's
    // size, a backlog are the preset's to name).
    let shapes = ["threads", "workers", "offload", "processes", "max_threads"];
    let each: Vec<String> = knobs
        .knobs
        .iter()
        .filter(|k| k.set || (shapes.contains(&k.knob.as_str()) && b.model.reads(&k.knob)))
        .map(|k| {
            let v = k.value.map_or("no limit".into(), |v| v.to_string());
            if k.set {
                format!("{} {v}", k.setting)
            } else {
                format!("{} {v} ({}, its default)", k.setting, k.default)
            }
        })
        .collect();
    if each.is_empty() {
        format!("{} {}", b.runtime.as_str(), b.model)
    } else {
        format!("{} {}: {}", b.runtime.as_str(), b.model, each.join(", "))
    }
}
