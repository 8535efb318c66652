//! What a runtime's defaults make of a model's knobs: the parameters it
//! runs with, each knob's value and origin, and the host it runs on.

use iolab_model::concurrency::Host;
use iolab_model::runtime::{KnobOrigin, RuntimeKnobs};
use iolab_model::{ModelKind, ModelParams, Runtime};

use super::{Manifest, ModelEntry};

impl Manifest {
    /// `params` with the runtime's defaults for `model` on `cores` cores
    /// filled in where unset.
    pub fn effective(&self, model: ModelKind, params: &ModelParams, cores: u32) -> ModelParams {
        let mut p = params.clone();
        if let Some(entry) = self.models.get(model.as_str()) {
            for (name, v) in &entry.defaults {
                if let Some(k) = iolab_model::knob::knob(name) {
                    if (k.get)(&p).is_none() {
                        (k.set)(&mut p, Some(v.value(cores)));
                    }
                }
            }
        }
        p
    }

    /// The knobs of `model` with `params` on `cores` cores as this runtime
    /// has them: every knob the model reads here or the runtime defaults,
    /// its value, whether it was set, what the runtime calls it (a knob it
    /// names nowhere is its launcher's flag) and the rule of its default (the
    /// manifest's, else iolab's knob table).
    pub fn knobs(&self, model: ModelKind, params: &ModelParams, cores: u32) -> RuntimeKnobs {
        let empty = ModelEntry::default();
        let entry = self.models.get(model.as_str()).unwrap_or(&empty);
        let effective = self.effective(model, params, cores);
        let knobs = iolab_model::KNOBS
            .iter()
            .filter(|k| {
                entry.knobs.iter().any(|n| n == k.name) || entry.defaults.contains_key(k.name)
            })
            .map(|k| KnobOrigin {
                knob: k.name.to_string(),
                value: effective.value(k, cores),
                set: (k.get)(params).is_some(),
                setting: entry
                    .settings
                    .get(k.name)
                    .or_else(|| self.settings.get(k.name))
                    .cloned()
                    .unwrap_or_else(|| format!("{} {}", self.name, k.flag())),
                default: entry
                    .defaults
                    .get(k.name)
                    .map_or_else(|| k.default.rule(), crate::targets::expr::Default::rule),
            })
            .collect();
        RuntimeKnobs {
            runtime: Runtime::named(&self.name).unwrap_or_default(),
            knobs,
        }
    }

    /// The host a model of this runtime runs on.
    pub fn host(&self, cores: u32) -> Host {
        Host {
            cores,
            gil: self.gil,
        }
    }
}
