//! `iolab whatif PRESET...`: verified counterfactuals. A whatif preset is a
//! capacity preset whose first target is the service as it runs (A) and
//! whose other targets are changes a team could make to it (B: another
//! model, more threads, a bigger pool, on the same runtime or another).
//! A is searched as a black box (the load, `/proc` and the kernel; nothing
//! from its model or its own series) and fitted; each B is predicted from
//! that fit alone (the fitted network on B's model with B's runtime's own
//! defaults, searched under the same objective on the simulation), then
//! started and searched itself: predicted against measured. Before B is
//! measured, what a request costs under B's runtime is calibrated
//! ([`calibrate`]) and B predicted with that cost.
//!
//! ```toml
//! [whatif]
//! expect = "threads"    # the resource A's configuration sets (checked)
//! ```

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::Deserialize;

use iolab_model::capacity::{Resource, Search, StepRecord, WhatIf};
use iolab_model::experiment::RunSpec;
use iolab_model::whatif::{Calibration, Counterfactual, Pair, WhatIfFile, WHATIF_SCHEMA};

use crate::preset::{self, Rig};
use crate::warm::Warm;
use crate::Probe;
use iolab_lab::preset::{Overrides, PresetError};
use predictor::Predictor;

mod a_cost;
pub mod calibrate;
pub(crate) mod holds;
mod predictor;

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
    calibrated: bool,
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
        let pair = preset::with_rig(plan, slo, o, cancel.clone(), say, &each, |rig| {
            pair(
                rig,
                Named {
                    name: &plan.name,
                    description: &plan.description,
                    expected: *expected,
                    calibrated,
                },
                &targets,
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
        started_utc: iolab_lab::results::rfc3339(std::time::SystemTime::now()),
    })
}

type Loaded = (
    iolab_model::experiment::ExperimentPlan,
    iolab_model::capacity::Slo,
    crate::Options,
    Option<Resource>,
);

/// A whatif preset: a capacity preset with at least two targets and a
/// `[whatif]` table.
fn load(name: &str, over: Overrides) -> Result<Loaded, PresetError> {
    let (plan, slo, o) = preset::load(name, over)?;
    let (origin, text) = iolab_lab::preset::locate(name)?;
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

/// A pair's preset: its name, what it says, the resource A's
/// configuration sets, and whether B's cost is calibrated.
struct Named<'a> {
    name: &'a str,
    description: &'a str,
    expected: Option<Resource>,
    calibrated: bool,
}

/// A, fitted; each B predicted (calibrated when asked), then measured.
fn pair(rig: &Rig, n: Named, targets: &[&RunSpec], say: &dyn Fn(&str)) -> Result<Pair, String> {
    let (name, speed) = (n.name, crate::machine::Sampler::start());
    let (a, bs) = targets.split_first().ok_or("no target")?;
    say(&format!("whatif {name}: fitting {} as a black box", a.name));
    let (fitted, (warm, side)) = fit_a(rig, a, n.calibrated, say)?;
    let named = fitted.fit.as_ref().map(|f| f.binding.resource);
    let a_answered = warm.as_ref().map(|w| w.answered);
    let mut changes = Vec::new();
    for b in bs {
        if rig.cancelled() {
            break;
        }
        let Some(predictor) = Predictor::of(rig, &fitted, b) else {
            say(&format!(
                "whatif {name}: {} has no fit to predict from",
                a.name
            ));
            break;
        };
        let b_side = |probe: &Probe| match &side {
            Some(side) => {
                let at = |ms: f64| predictor.at(ms).slo_capacity_rps;
                let copy_owed = |count: f64| owed(b, count - runtime_warmup(b));
                calibrate::b_side(rig, side, (probe, &copy_owed), &b.name, &at, say)
            }
            None => Ok(None),
        };
        let ((calibration, predicted), measured, ()) = rig.search_between(
            b,
            true,
            |probe| {
                let calibration = b_side(probe)?;
                let predicted = predict_b(&predictor, calibration.as_ref());
                say(&format!(
                    "whatif {name}: {} predicted at {} req/s; measuring it",
                    b.name,
                    predicted
                        .slo_capacity_rps
                        .map_or("-".into(), |c| format!("{c:.0}"))
                ));
                let o = &rig.options;
                let a_read = (&fitted.steps[..], fitted.capacity_rps);
                let warm = warm_b(a_read, a_answered, b, predicted.slo_capacity_rps, o);
                Ok(((calibration, predicted), Some(warm)))
            },
            |_, _| Ok(()),
        )?;
        let predicted_interval = Counterfactual::interval(
            predicted.slo_capacity_rps,
            fitted.capacity_rps,
            fitted.interval,
        );
        changes.push(Counterfactual {
            name: b.name.clone(),
            change: predictor.words.clone(),
            error_pct: Counterfactual::error(predicted.slo_capacity_rps, measured.capacity_rps),
            intervals_meet: Counterfactual::meet(predicted_interval, measured.interval),
            predicted_interval,
            predicted,
            measured,
            calibration,
        });
    }
    Ok(Pair {
        name: name.to_string(),
        description: n.description.to_string(),
        slo: rig.slo.clone(),
        expected: n.expected,
        named_right: n.expected.zip(named).map(|(e, n)| e == n),
        fitted,
        changes,
        cpu_speed: speed.finish(),
    })
}

/// B predicted with its calibrated cost (the fit's CPU without one), and
/// no higher than its copy held: B does its copy's work and more.
fn predict_b(predictor: &Predictor, calibration: Option<&Calibration>) -> WhatIf {
    let cost = calibration
        .and_then(|c| c.b_ms())
        .or(predictor.fit.cpu_per_request_ms)
        .unwrap_or(0.0);
    let mut predicted = predictor.at(cost);
    if let Some(c) = calibration.and_then(|k| k.copy_capacity_rps()) {
        predicted.slo_capacity_rps = predicted.slo_capacity_rps.map(|p| p.min(c));
    }
    predicted
}

/// A searched as a black box; calibrated, held again warm and its copy
/// measured before it stops (a_cost.rs, calibrate.rs).
fn fit_a(
    rig: &Rig,
    a: &RunSpec,
    calibrated: bool,
    say: &dyn Fn(&str),
) -> Result<(Search, ASideOf), String> {
    rig.search_then(a, true, None, |probe, search| {
        if !calibrated {
            return Ok((None, None));
        }
        let warm = a_cost::warm_a(rig, probe, search, runtime_warmup(a))?;
        let side = calibrate::a_side(rig, probe, search, warm.as_ref(), &a.name, say)?;
        Ok((warm, side))
    })
}

/// A's warm holds and its copy, when calibrated.
type ASideOf = (Option<a_cost::AWarm>, Option<calibrate::ASide>);

/// B's warm-up before its search: as many requests as A had answered when
/// its capacity was read, or its cost when A was held again warm
/// (`a_answered`; A's search had warmed it, B's would otherwise
/// warm B as it measured: a Spring target failed 500/s, then passed 475/s
/// at half the CPU a request), and at least as many as B's runtime's
/// launcher sends itself (`warmup` in its runtime.toml: what a fresh one
/// needs, sent there as `sleep:1`, not as the measured request), at half
/// B's predicted capacity (A's, with no prediction); none for a Rust B
/// ([`owed`]).
fn warm_b(
    (a_steps, a_capacity): (&[StepRecord], Option<f64>),
    a_answered: Option<f64>,
    b: &RunSpec,
    predicted: Option<f64>,
    o: &crate::Options,
) -> Warm {
    let mut w = warm_after(a_steps, a_capacity, predicted, o);
    // A held again warm (a_cost.rs) had answered that many in all.
    w.requests = w.requests.max(a_answered.unwrap_or(0.0));
    w.requests = owed(b, w.requests.max(runtime_warmup(b)));
    w
}

/// Of `requests` B would be sent to warm it, what it is owed: none for
/// iolab's own Rust targets, compiled ahead of time with their threads and
/// loops made at start, so nothing in them warms by count (their warm-up
/// is then the shortest, and holds until steady): the CPU pair's Rust B
/// was sent 3,122 requests over 30 s twice, once as a copy and once before
/// its search, and held what it held sent none (whatif-cpu, 200-212.5/s).
fn owed(b: &RunSpec, requests: f64) -> f64 {
    if b.runtime.is_rust() {
        0.0
    } else {
        requests.max(0.0)
    }
}

/// The requests `spec`'s runtime's launcher sends a fresh target itself
/// (`warmup` in its runtime.toml); 0 for the Rust targets, iolab's own,
/// with no launcher and no manifest.
fn runtime_warmup(spec: &RunSpec) -> f64 {
    if spec.runtime.is_rust() {
        return 0.0;
    }
    iolab_lab::targets::Manifest::load(&spec.runtime).map_or(0.0, |m| f64::from(m.warmup))
}

/// [`warm_b`] from A's steps and capacity.
fn warm_after(
    steps: &[StepRecord],
    capacity: Option<f64>,
    predicted: Option<f64>,
    o: &crate::Options,
) -> Warm {
    let capacity = capacity.unwrap_or(o.start_rps);
    let rate = predicted.unwrap_or(capacity) / 2.0;
    Warm {
        requests: a_cost::answered_before(steps, capacity),
        rate: rate.clamp(1.0, o.max_rps),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Spring target searched fresh at CI size failed 500/s costing
    /// 1.84 ms a request, then passed 475/s at 1.02 in the same search (its
    /// JIT compiling as it was measured), where A had been read after its
    /// whole search. B is first sent as many requests as A had answered
    /// when its capacity was read, at half B's predicted capacity.
    #[test]
    fn r31_10_b_is_warmed_as_a_was_before_its_search() {
        let step = |rate: f64, passed: bool| {
            let mut s = StepRecord {
                rate_rps: rate,
                passed,
                ..StepRecord::default()
            };
            s.attack.requests.ok = (rate * 2.0) as u64;
            s
        };
        let a = [
            step(50.0, true),
            step(200.0, false),
            step(100.0, true),
            step(100.0, true),
        ];
        let o = crate::Options::default();
        // 100 + 400 + 200 answered before the last step at 100/s.
        let w = warm_after(&a, Some(100.0), Some(500.0), &o);
        assert_eq!((w.requests, w.rate), (700.0, 250.0));
        assert_eq!(w.length(), std::time::Duration::from_secs_f64(2.8));
        // No prediction: half A's capacity.
        assert_eq!(warm_after(&a, Some(100.0), None, &o).rate, 50.0);
    }

    /// s12: the CPU pair's Rust B (whatif-cpu) was sent A's 3,122 requests
    /// twice, 30 s as its copy and 30 s again before its search, though
    /// nothing in a Rust target warms by count; a JVM B is still owed its
    /// count, or its launcher's when that is more.
    #[test]
    fn r31_16_a_rust_b_is_owed_no_warm_up_and_a_jvm_b_its_count() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../presets/test");
        let b = |file: &str| {
            let (plan, _, _, _) = load(&format!("{dir}/{file}"), Overrides::default()).unwrap();
            preset::targets(&plan)[1].clone()
        };
        let (rust, jvm) = (b("whatif-cpu.toml"), b("whatif-jvm-pool.toml"));
        assert_eq!(owed(&rust, 3122.0), 0.0);
        assert_eq!(owed(&jvm, 3122.0), 3122.0);
        assert_eq!(owed(&jvm, 3122.0 - runtime_warmup(&jvm)), 0.0);
        let a = (&[][..], Some(200.0));
        let o = crate::Options::default();
        let rust_warm = warm_b(a, Some(3122.0), &rust, Some(206.0), &o);
        assert_eq!(rust_warm.length(), crate::warm::WARM_UP);
        let jvm_warm = warm_b(a, Some(3122.0), &jvm, Some(545.0), &o);
        assert_eq!(jvm_warm.requests, runtime_warmup(&jvm));
        assert_eq!(jvm_warm.length(), crate::warm::MAX_WARM_UP);
    }

    /// Every whatif preset shipped (the embedded ones and the test
    /// folder's): a pair, with the resource A's configuration sets.
    #[test]
    fn every_whatif_preset_is_a_pair_that_names_its_resource() {
        let test_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../presets/test");
        let mut names: Vec<String> = iolab_lab::preset::EMBEDDED
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
