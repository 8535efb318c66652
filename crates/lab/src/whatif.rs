//! `iolab whatif PRESET...`: verified counterfactuals. A whatif preset is a
//! capacity preset whose first target is the service as it runs (A) and
//! whose other targets are changes a team could make to it (B: another
//! model, more threads, a bigger pool, on the same runtime or another).
//! A is searched as a black box (the load, `/proc` and the kernel; nothing
//! from its model or its own series) and fitted; each B is predicted from
//! that fit alone (the fitted network on B's model with B's runtime's own
//! defaults, searched under the same objective on the simulation), then
//! started and searched itself: predicted against measured.
//!
//! ```toml
//! [whatif]
//! expect = "threads"    # the resource A's configuration sets (checked)
//! ```

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::Deserialize;

use iolab_model::capacity::{Resource, Search, StepRecord};
use iolab_model::experiment::RunSpec;
use iolab_model::runtime::RuntimeKnobs;
use iolab_model::whatif::{Counterfactual, Pair, WhatIfFile, WHATIF_SCHEMA};
use iolab_predict::fit::network;
use iolab_predict::whatif::{simulate, Change, Replay};

use crate::capacity::preset::{self, Bench};
use crate::capacity::step_length;
use crate::preset::{Overrides, PresetError};
use crate::targets::Defaults;

/// The `[whatif]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Section {
    /// The resource A's configuration sets.
    #[serde(default)]
    expect: Option<Resource>,
}

#[derive(Deserialize)]
struct Only {
    whatif: Option<toml::Value>,
}

/// Why `iolab whatif` stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WhatIfError {
    /// A preset cannot be one (nothing was started).
    #[error("{0}")]
    Input(String),
    /// A target or a backend could not be started or loaded.
    #[error("{0}")]
    Failed(String),
}

/// Search every pair of `names` (presets) at `over`'s time-scale.
pub fn run(
    names: &[String],
    over: Overrides,
    cancel: Arc<AtomicBool>,
    say: &dyn Fn(&str),
    each: &dyn Fn(&StepRecord),
) -> Result<WhatIfFile, WhatIfError> {
    // Every preset is read before anything starts: a bad one costs nothing.
    let mut loaded = Vec::new();
    for name in names {
        loaded.push(load(name, over).map_err(|e| WhatIfError::Input(e.0))?);
    }
    let mut pairs = Vec::new();
    let mut scale = 1.0;
    for (plan, slo, o, expected) in &loaded {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        scale = plan.scale;
        let targets = preset::targets(plan);
        let pair = preset::with_bench(plan, slo, o, cancel.clone(), say, &each, |bench| {
            pair(
                bench,
                &plan.name,
                &plan.description,
                &targets,
                *expected,
                say,
            )
        })
        .and_then(|r| r)
        .map_err(WhatIfError::Failed)?;
        pairs.push(pair);
    }
    Ok(WhatIfFile {
        schema: WHATIF_SCHEMA.to_string(),
        scale,
        pairs,
        started_utc: crate::results::rfc3339(std::time::SystemTime::now()),
    })
}

type Loaded = (
    iolab_model::experiment::ExperimentPlan,
    iolab_model::capacity::Slo,
    crate::capacity::Options,
    Option<Resource>,
);

/// A whatif preset: a capacity preset with at least two targets and a
/// `[whatif]` table.
fn load(name: &str, over: Overrides) -> Result<Loaded, PresetError> {
    let (plan, slo, o) = preset::load(name, over)?;
    let (origin, text) = crate::preset::locate(name)?;
    let only: Only = toml::from_str(&text)
        .map_err(|e| PresetError(format!("{origin}: [whatif]: {}", e.message())))?;
    let Some(table) = only.whatif else {
        return Err(PresetError(format!(
            "{origin}: no [whatif] table: add one (expect = \"threads\") and a second [[targets]] for the change (see docs/capacity.md)"
        )));
    };
    let sec: Section = table.try_into().map_err(|e: toml::de::Error| {
        PresetError(format!("{origin}: [whatif]: {}", e.message()))
    })?;
    if preset::targets(&plan).len() < 2 {
        return Err(PresetError(format!(
            "{origin}: a whatif preset needs two [[targets]] at least: the service as it runs, then each change"
        )));
    }
    Ok((plan, slo, o, sec.expect))
}

/// A, fitted; each B predicted, then measured.
fn pair(
    bench: &Bench,
    name: &str,
    description: &str,
    targets: &[&RunSpec],
    expected: Option<Resource>,
    say: &dyn Fn(&str),
) -> Result<Pair, String> {
    let (a, bs) = targets.split_first().ok_or("no target")?;
    say(&format!("whatif {name}: fitting {} as a black box", a.name));
    let fitted = bench.search(a, true)?;
    let named = fitted.fit.as_ref().map(|f| f.binding.resource);
    let mut changes = Vec::new();
    for b in bs {
        if bench.cancelled() {
            break;
        }
        let Some(predicted) = predict(bench, &fitted, b)? else {
            say(&format!(
                "whatif {name}: {} has no fit to predict from",
                a.name
            ));
            break;
        };
        say(&format!(
            "whatif {name}: {} predicted at {} req/s; measuring it",
            b.name,
            predicted
                .0
                .slo_capacity_rps
                .map_or("-".into(), |c| format!("{c:.0}"))
        ));
        let measured = bench.search(b, true)?;
        changes.push(Counterfactual {
            name: b.name.clone(),
            change: predicted.1,
            error_pct: Counterfactual::error(predicted.0.slo_capacity_rps, measured.capacity_rps),
            predicted: predicted.0,
            measured,
        });
    }
    Ok(Pair {
        name: name.to_string(),
        description: description.to_string(),
        slo: bench.slo.clone(),
        expected,
        named_right: expected.zip(named).map(|(e, n)| e == n),
        fitted,
        changes,
    })
}

/// B as the fit of A predicts it: the fitted network on B's model with its
/// runtime's defaults on the target's cores, searched under the objective;
/// and the change in words.
fn predict(
    bench: &Bench,
    a: &Search,
    b: &RunSpec,
) -> Result<Option<(iolab_model::capacity::WhatIf, String)>, String> {
    let (Some(fit), Some(capacity)) = (a.fit.as_ref(), a.capacity_rps) else {
        return Ok(None);
    };
    let cores = bench.options.cores;
    let defaults = Defaults::of(b);
    let params = defaults.effective(b, cores);
    let net = network(fit)
        .on(b.model, params, cores)
        .with_gil(defaults.host(cores).gil);
    let words = change_words(b, &defaults.knobs(b, cores));
    let timeout = match &b.work {
        iolab_model::experiment::Work::Http(w) => w.timeout,
        _ => return Ok(None),
    };
    let rates: Vec<f64> = a.steps.iter().map(|s| s.rate_rps).collect();
    let replay = Replay {
        rates: &rates,
        step: step_length(bench.slo, timeout, fit.service_ms, &bench.options, capacity),
        timeout,
        slo: bench.slo,
    };
    let change = Change {
        change: words.clone(),
        network: net,
        fitted: false,
        runtime: b.runtime.clone(),
    };
    Ok(Some((simulate(&change, &replay), words)))
}

/// `jvm loop-async: spring.netty loops 4 (max(cores, 4), its default)`:
/// the change as its runtime's own configuration says it.
fn change_words(b: &RunSpec, knobs: &RuntimeKnobs) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every whatif preset shipped (the embedded ones and the test
    /// folder's): a pair, with the resource A's configuration sets.
    #[test]
    fn every_whatif_preset_is_a_pair_that_names_its_resource() {
        let test_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../presets/test");
        let mut names: Vec<String> = crate::preset::EMBEDDED
            .iter()
            .map(|(n, _)| n.to_string())
            .filter(|n| n.starts_with("whatif-"))
            .collect();
        for e in std::fs::read_dir(test_dir).unwrap().flatten() {
            let f = e.file_name().to_string_lossy().into_owned();
            if f.starts_with("whatif-") && f.ends_with(".toml") {
                names.push(format!("{test_dir}/{f}"));
            }
        }
        assert!(names.len() >= 9, "{names:?}");
        for name in &names {
            let (plan, _, _, expected) =
                load(name, Overrides::default()).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert!(preset::targets(&plan).len() >= 2, "{name}");
            assert!(expected.is_some(), "{name}: no [whatif] expect");
        }
    }
}
