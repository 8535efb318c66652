//! A capacity search as a preset: any HTTP preset with a `[capacity]` table
//! (the objective and the search's settings). `iolab capacity PRESET`
//! searches each of its targets in turn (one search per target: a sweep's
//! other points are the same target), starting and stopping them as
//! `iolab run` does, and a foreign target (`url` or `command` with a
//! `request`) is searched with its own request. The same file runs with
//! `iolab run`, which ignores `[capacity]`.
//!
//! ```toml
//! [capacity]
//! slo = "p99<200ms,success>=99.9%"
//! start = 10          # req/s
//! max = 10000
//! precision = "5%"
//! min_step = "1s"
//! max_step = "30s"
//! max_steps = 30
//! ```

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use iolab_model::capacity::{BudgetError, Search, Slo};
use iolab_model::experiment::{ExperimentPlan, RunSpec, Work};

use super::start::start;
use super::warm::Warm;
use super::{Options, Probe, Progress};
use iolab_lab::preset::{Overrides, PresetError};
use iolab_lab::services::{self, Addresses, Needs};
use iolab_lab::targets::StartOptions;

/// The `[capacity]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Section {
    /// The objective, e.g. `p99<200ms,success>=99.9%`.
    pub slo: String,
    /// First rate, req/s.
    #[serde(default)]
    pub start: Option<f64>,
    /// Highest rate, req/s.
    #[serde(default)]
    pub max: Option<f64>,
    /// Bracket width to stop at, e.g. `"5%"`.
    #[serde(default)]
    pub precision: Option<String>,
    /// Shortest step, e.g. `"1s"`.
    #[serde(default)]
    pub min_step: Option<String>,
    /// Longest step.
    #[serde(default)]
    pub max_step: Option<String>,
    /// Most steps per target.
    #[serde(default)]
    pub max_steps: Option<usize>,
    /// The share of a rate's windows allowed to miss, e.g. "25%".
    #[serde(default)]
    pub budget: Option<String>,
}

pub use crate::share::{parse_share, ShareError};

#[derive(Deserialize)]
struct Only {
    capacity: Option<Section>,
}

/// A capacity preset: its plan, objective and settings, at the plan's
/// time-scale (the objective's bounds and the steps' lengths shrink with
/// it, the rates grow).
pub fn load(
    name_or_path: &str,
    over: Overrides,
) -> Result<(ExperimentPlan, Slo, Options), PresetError> {
    let (origin, text) = iolab_lab::preset::locate(name_or_path)?;
    let plan = iolab_lab::preset::parse_plan(&text, &origin, over)?;
    let only: Only = toml::from_str(&text)
        .map_err(|e| PresetError(format!("{origin}: [capacity]: {}", e.message())))?;
    let sec = only.capacity.ok_or_else(|| {
        PresetError(format!(
            "{origin}: no [capacity] table: add one with slo = \"p99<200ms\" (see docs/capacity.md)"
        ))
    })?;
    let bad =
        |field: &str, e: String| PresetError(format!("{origin}: field 'capacity.{field}': {e}"));
    let mut slo: Slo = sec
        .slo
        .parse()
        .map_err(|e: iolab_model::capacity::SloError| bad("slo", e.to_string()))?;
    let f = plan.scale;
    for c in &mut slo.clauses {
        if let iolab_model::capacity::Clause::Latency { below_ms, .. } = c {
            *below_ms *= f;
        }
    }
    let d = Options::default();
    let dur = |field: &str, v: &Option<String>, default: Duration| match v {
        Some(s) => iolab_model::parse_duration(s).map_err(|e| bad(field, e.to_string())),
        None => Ok(default),
    };
    let o = Options {
        start_rps: sec.start.unwrap_or(d.start_rps) / f,
        max_rps: sec.max.unwrap_or(d.max_rps) / f,
        precision: match &sec.precision {
            Some(p) => parse_share(p).map_err(|e| bad("precision", e.to_string()))?,
            None => d.precision,
        },
        min_step: dur("min_step", &sec.min_step, d.min_step)?.mul_f64(f),
        max_step: dur("max_step", &sec.max_step, d.max_step)?.mul_f64(f),
        max_steps: sec.max_steps.unwrap_or(d.max_steps),
        cores: d.cores,
        sweep: None,
        budget: match &sec.budget {
            Some(b) => b
                .parse()
                .map_err(|e: BudgetError| bad("budget", e.to_string()))?,
            None => d.budget,
        },
    };
    if !(o.start_rps > 0.0 && o.max_rps >= o.start_rps) {
        return Err(bad(
            "start",
            "start must be above 0 and max at least start".into(),
        ));
    }
    if o.min_step.is_zero() || o.max_step < o.min_step || o.max_steps < 2 {
        return Err(bad(
            "min_step",
            "steps must be above 0, max_step >= min_step, max_steps >= 2".into(),
        ));
    }
    if plan.runs.iter().any(|r| matches!(r.work, Work::Batch(_))) {
        return Err(PresetError(format!(
            "{origin}: a capacity search loads HTTP targets: use an HTTP preset"
        )));
    }
    Ok((plan, slo, o))
}

/// One run per distinct target (a sweep's rates are the same target).
pub fn targets(plan: &ExperimentPlan) -> Vec<&RunSpec> {
    let mut seen = HashSet::new();
    plan.runs
        .iter()
        .filter(|r| {
            let key = format!(
                "{}|{}|{:?}|{}",
                r.model,
                r.runtime,
                r.params,
                r.coordinates
                    .get("target")
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            );
            let key = match &r.work {
                Work::Http(w) => format!("{key}|{:?}|{:?}|{}", w.command, w.foreign, w.steps),
                Work::Batch(_) => key,
            };
            seen.insert(key)
        })
        .collect()
}

/// The names its searches will have, in order.
pub fn search_names(plan: &ExperimentPlan) -> Vec<String> {
    targets(plan).iter().map(|r| r.name.clone()).collect()
}

/// Search every target of a capacity preset.
pub fn run(
    plan: &ExperimentPlan,
    slo: &Slo,
    o: &Options,
    cancel: Arc<AtomicBool>,
    say: &dyn Fn(&str),
    each: &dyn Progress,
) -> Result<Vec<Search>, String> {
    with_rig(plan, slo, o, cancel, say, each, |rig| {
        let mut out = Vec::new();
        for spec in targets(plan) {
            if rig.cancelled() {
                break;
            }
            say(&format!("capacity: searching {}", spec.name));
            out.push(rig.search(spec, false)?);
        }
        Ok(out)
    })?
}

// The rig's results are Strings for now, with reason: the what-if
// (`whatif/`) drives the rig with closures whose failures are its own
// one-line text and that it chains with `and_then` and `?`; the rig's
// faults join them as text until the what-if's errors are typed.

/// What every search of a preset shares: its backends, the CPUs the target
/// and the generator are pinned to, the binary, the settings, Ctrl-C. A
/// rig starts each target and hands its search the [`Probe`] that loads it
/// (the real [`Bench`](super::Bench); the glossary is in `bench.rs`).
pub struct Rig<'a> {
    backends: Addresses,
    target_cpus: Vec<usize>,
    gen_cpus: Vec<usize>,
    exe: PathBuf,
    /// The search's settings, `cores` the target's.
    pub options: Options,
    /// The objective.
    pub slo: &'a Slo,
    cancel: Arc<AtomicBool>,
    each: &'a dyn Progress,
}

/// Start the backends `plan` needs, hand `f` the rig, stop them.
pub fn with_rig<R>(
    plan: &ExperimentPlan,
    slo: &Slo,
    o: &Options,
    cancel: Arc<AtomicBool>,
    say: &dyn Fn(&str),
    each: &dyn Progress,
    f: impl FnOnce(&Rig) -> R,
) -> Result<R, String> {
    // Every runtime the targets use, built once before the first starts (a
    // Node target on a fresh checkout exited before its URL: r31_06).
    iolab_lab::targets::runtime::prepare(plan).map_err(|e| e.to_string())?;
    let backends = services::start(&Needs::of_plan(plan), &Addresses::from_env(), say)
        .map_err(|e| format!("{e:?}"))?;
    let (target_cpus, gen_cpus) = iolab_lab::environment::pinning(true);
    // The search's own threads (watch, telemetry, scrapes) off the target's core.
    let _kept = if target_cpus.is_empty() {
        None
    } else {
        iolab_lab::environment::keep_to(&gen_cpus)
    };
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the iolab binary: {e}"))?;
    // The fit and the what-ifs count the cores the target was pinned to.
    let cores = if target_cpus.is_empty() {
        o.cores
    } else {
        target_cpus.len() as u32
    };
    let rig = Rig {
        backends: backends.addresses.clone(),
        target_cpus,
        gen_cpus,
        exe,
        options: Options { cores, ..*o },
        slo,
        cancel,
        each,
    };
    let out = f(&rig);
    backends.stop();
    Ok(out)
}

impl Rig<'_> {
    /// Ctrl-C was pressed.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Start `spec`'s target, search it, stop it. A black box is searched
    /// without its own series: the load, `/proc` and the kernel only.
    pub fn search(&self, spec: &RunSpec, black_box: bool) -> Result<Search, String> {
        self.search_warmed(spec, black_box, None)
    }

    /// [`Rig::search`], the target first sent `warm` (said in the
    /// search's notes).
    pub fn search_warmed(
        &self,
        spec: &RunSpec,
        black_box: bool,
        warm: Option<Warm>,
    ) -> Result<Search, String> {
        self.search_then(spec, black_box, warm, |_, _| Ok(()))
            .map(|(search, ())| search)
    }

    /// [`Rig::search_warmed`], then `then` with the target still running
    /// (warmed by its search): what it measured beside the search.
    pub fn search_then<R>(
        &self,
        spec: &RunSpec,
        black_box: bool,
        warm: Option<Warm>,
        then: impl FnOnce(&Probe, &Search) -> Result<R, String>,
    ) -> Result<(Search, R), String> {
        self.search_between(spec, black_box, |_| Ok(((), warm)), then)
            .map(|((), search, after)| (search, after))
    }

    /// Start `spec`'s target; `before` measures it first and says how to
    /// warm it for its search; search it; `then` with it still running.
    pub fn search_between<B, R>(
        &self,
        spec: &RunSpec,
        black_box: bool,
        before: impl FnOnce(&Probe) -> Result<(B, Option<Warm>), String>,
        then: impl FnOnce(&Probe, &Search) -> Result<R, String>,
    ) -> Result<(B, Search, R), String> {
        self.with_probe(spec, black_box, |probe, mut notes| {
            let (first, warm) = before(probe)?;
            if let Some(w) = warm {
                notes.push(w.before_search(probe, self.slo)?);
            }
            let search = super::run(&spec.name, probe, self.slo, &self.options, notes, self.each);
            let after = then(probe, &search)?;
            Ok((first, search, after))
        })?
    }

    /// Start `spec`'s target, hand `f` the probe that loads it (and the
    /// notes its search would carry), stop it.
    pub fn with_probe<R>(
        &self,
        spec: &RunSpec,
        black_box: bool,
        f: impl FnOnce(&Probe, Vec<String>) -> R,
    ) -> Result<R, String> {
        let Work::Http(w) = &spec.work else {
            return Err(format!(
                "{}: a capacity search loads HTTP targets",
                spec.name
            ));
        };
        let opts = StartOptions {
            backends: self.backends.clone(),
            cpus: self.target_cpus.clone(),
            separate_metrics: false,
        };
        let started = start(spec, w, &self.exe, &opts, &self.cancel).map_err(|e| e.to_string())?;
        let probe = Probe {
            url: started.url,
            request: started.request,
            timeout: w.timeout,
            connections: w.connections,
            gen_cpus: self.gen_cpus.clone(),
            target_cpus: self.target_cpus.clone(),
            pid: started.pid,
            metrics: if black_box { None } else { started.metrics },
            cancel: self.cancel.clone(),
            live: None,
            work_base: started.work_base,
        };
        let out = f(&probe, started.notes);
        if let Some(mut t) = started.target {
            t.stop(Duration::from_millis(1500));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search's own threads (the step's watch lists the target's
    /// sockets every 100 ms) ran on the target's pinned core, pushed off
    /// the generator's spinning one: 0.22 of the core, read as the
    /// target's CPU and taken from it (a quiet rust loop held 3,360/s
    /// with it there, 4,320/s without). Every thread a rig starts is
    /// kept to the generator's CPUs, and the caller's mask is restored.
    #[test]
    fn r31_04_the_searchs_own_threads_stay_off_the_targets_core() {
        let (plan, slo, o) = load("whatif-rust-pool", Overrides::default()).unwrap();
        let before = iolab_lab::environment::allowed_cpus();
        let (target, generator) = iolab_lab::environment::pinning(true);
        let cancel = Arc::new(AtomicBool::new(false));
        let each = |_: &iolab_model::capacity::StepRecord| {};
        let inside = with_rig(&plan, &slo, &o, cancel, &|_| {}, &each, |_| {
            std::thread::spawn(iolab_lab::environment::allowed_cpus)
                .join()
                .unwrap()
        })
        .unwrap();
        if target.is_empty() {
            // One CPU: nothing to keep apart.
            assert_eq!(inside, before);
        } else {
            assert_eq!(inside, generator);
            assert!(inside.iter().all(|c| !target.contains(c)));
        }
        assert_eq!(iolab_lab::environment::allowed_cpus(), before);
    }
}
