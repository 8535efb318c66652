//! A parsed preset file expanded into an [`ExperimentPlan`]: rules that need
//! more than one field, the sweep's cartesian product, the time-scale, and
//! every check a run's target needs before anything starts (the same checks
//! for `--dry-run` and for a real run). One file per table: [`target`]
//! (`[[targets]]`, and [`foreign`] for a user's own service), [`load`] (`[load]`), [`batch`] (`[batch]`),
//! [`spans`] (`[spans]`).

mod batch;
mod bounds;
mod foreign;
mod load;
mod spans;
mod target;

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use iolab_model::batch::WorkerKind;
use iolab_model::experiment::{ExperimentPlan, RunSpec, Work};
use iolab_model::limits::MAX_REPS;
use iolab_model::{ModelKind, Step};

use super::file::{ConnectionKind, DriverKind, PresetFile, TargetSection, WorkKind};
use super::sweep::{self, Axis, Point};
use super::values::{Count, OneOrMany};

/// Most runs one preset may expand to.
pub const MAX_RUNS: usize = 10_000;
/// Warm-up when the preset gives none.
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(1);
/// Client timeout when the preset gives none (artillery's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Series interval when the preset gives none.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(500);
/// Shortest series interval after scaling.
const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// A rule broken by a field: `field` is its dotted path, e.g. `load.rate`.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// Dotted path of the field, e.g. `targets[1].command`.
    pub field: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

fn fault(field: impl Into<String>, message: impl std::fmt::Display) -> FieldError {
    FieldError {
        field: field.into(),
        message: message.to_string(),
    }
}

/// Overrides from the command line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides {
    /// `--scale`.
    pub scale: Option<f64>,
    /// `--reps`.
    pub reps: Option<u32>,
}

/// Expand a parsed file into a plan.
pub fn expand(
    file: PresetFile,
    source: Option<String>,
    over: Overrides,
) -> Result<ExperimentPlan, FieldError> {
    if file.name.trim().is_empty() || file.name.contains(['/', '\\']) {
        return Err(fault(
            "name",
            "give a short name without slashes, e.g. \"showdown\"",
        ));
    }
    if file.targets.is_empty() {
        return Err(fault("targets", "add at least one [[targets]] table"));
    }
    let scale = over.scale.or(file.scale.map(|s| s.0)).unwrap_or(1.0);
    if let Some(r) = file.reps.filter(|r| r.0 > u64::from(MAX_REPS)) {
        return Err(fault(
            "reps",
            format!("{} repetitions: at most {MAX_REPS}", r.0),
        ));
    }
    let reps = over.reps.or(file.reps.map(Count::u32)).unwrap_or(1);
    let warmup = file.warmup.map_or(DEFAULT_WARMUP, |d| d.0);
    let common = common_axes(&file)?;
    let swept = swept_names(&file.targets, &common);
    let mut runs = Vec::new();
    for (ti, t) in file.targets.iter().enumerate() {
        target::check(ti, t, &file)?;
        foreign::check(ti, t)?;
        let axes = target::axes_with(t, &common);
        if sweep::count(&axes).saturating_add(runs.len()) > MAX_RUNS {
            return Err(fault(
                "targets",
                format!("the sweep expands to more than {MAX_RUNS} runs; shorten a list"),
            ));
        }
        for combo in sweep::product(&axes) {
            let spec = run_of(&file, t, &axes, &combo, &swept, scale)?;
            bounds::check_run(ti, t, &spec, scale, over.scale.is_some())?;
            runs.push(spec);
        }
    }
    unique_names(&runs)?;
    if let Some(s) = &file.spans {
        spans::apply(s, &mut runs)?;
    }
    Ok(ExperimentPlan {
        name: file.name,
        description: file.description,
        source,
        scale,
        reps,
        warmup: warmup.mul_f64(scale),
        warmup_requests: file.warmup_requests.map(|c| c.0),
        runs,
        published: file.published.map(toml_to_json),
        pin: file.pin.unwrap_or(true),
    })
}

/// The axes every target shares: the load's or the batch's.
pub(super) fn common_axes(file: &PresetFile) -> Result<Vec<Axis>, FieldError> {
    match file.kind {
        WorkKind::Http => {
            if file.batch.is_some() {
                return Err(fault("batch", "a [batch] table needs kind = \"batch\""));
            }
            let l = file
                .load
                .as_ref()
                .ok_or_else(|| fault("load", "an HTTP preset needs a [load] table"))?;
            load::http_axes(l, file.held.as_ref())
        }
        WorkKind::Batch => {
            if file.load.is_some() || file.held.is_some() {
                return Err(fault(
                    "load",
                    "a batch preset has no [load] or [held]; use [batch]",
                ));
            }
            let b = file
                .batch
                .as_ref()
                .ok_or_else(|| fault("batch", "kind = \"batch\" needs a [batch] table"))?;
            batch::batch_axes(b)
        }
    }
}

/// The run at one combination of the axes' points.
fn run_of(
    file: &PresetFile,
    t: &TargetSection,
    axes: &[Axis],
    combo: &[usize],
    swept: &HashSet<String>,
    scale: f64,
) -> Result<RunSpec, FieldError> {
    let pick = Pick { axes, combo };
    let model = pick
        .model()
        .ok_or_else(|| fault("targets", "a [[targets]] table needs `model`"))?;
    let mut coordinates = BTreeMap::new();
    coordinates.insert("model".to_string(), Point::Model(model).value());
    let mut name = t
        .label
        .clone()
        .unwrap_or_else(|| model.as_str().to_string());
    if let Some(label) = &t.label {
        coordinates.insert("target".into(), label.clone().into());
    }
    for (ai, axis) in axes.iter().enumerate() {
        let p = &axis.points[combo[ai]];
        if axis.name != "model" && swept.contains(&axis.name) {
            coordinates.insert(axis.name.clone(), p.value());
            name.push_str(&format!("-{}={}", axis.name, p.label()));
        } else if *p == Point::Flag(true) {
            // A runtime option that is on is a coordinate, swept or not.
            coordinates.insert(axis.name.clone(), p.value());
        }
    }
    let work = match (file.kind, &file.load, &file.batch) {
        (WorkKind::Http, Some(load), _) => {
            Work::Http(load::http_work(load, file.held.as_ref(), t, &pick, scale)?)
        }
        (WorkKind::Batch, _, Some(batch)) => Work::Batch(batch::batch_spec(batch, &pick, scale)?),
        (WorkKind::Http, None, _) => {
            return Err(fault("load", "an HTTP preset needs a [load] table"))
        }
        (WorkKind::Batch, _, None) => {
            return Err(fault("batch", "kind = \"batch\" needs a [batch] table"))
        }
    };
    Ok(RunSpec {
        name,
        coordinates,
        model,
        runtime: t.runtime.clone(),
        params: target::params_of(&pick, t),
        scale,
        spans: None,
        work,
    })
}

fn unique_names(runs: &[RunSpec]) -> Result<(), FieldError> {
    let mut seen = HashSet::new();
    for r in runs {
        if !seen.insert(r.name.as_str()) {
            return Err(fault(
                "targets",
                format!(
                    "two runs would both be named '{}': give the [[targets]] tables distinct `label`s",
                    r.name
                ),
            ));
        }
    }
    Ok(())
}

/// The axes that sweep anywhere in the preset (every run names them),
/// collected once: asking per run and per axis walked every target again,
/// so 4,000 `[[targets]]` took 24 s to check (issue 30 finding 15).
pub(super) fn swept_names(targets: &[TargetSection], common: &[Axis]) -> HashSet<String> {
    let own = targets.iter().flat_map(target::own_axes);
    common
        .iter()
        .cloned()
        .chain(own)
        .filter(Axis::sweeps)
        .map(|a| a.name)
        .collect()
}

/// One run's point on each axis, looked up by the axis's name; each typed
/// getter is `None` where the run has no such axis.
pub(super) struct Pick<'a> {
    axes: &'a [Axis],
    combo: &'a [usize],
}

impl<'a> Pick<'a> {
    fn get(&self, name: &str) -> Option<&'a Point> {
        let i = self.axes.iter().position(|a| a.name == name)?;
        self.axes[i].points.get(self.combo[i])
    }

    fn model(&self) -> Option<ModelKind> {
        match self.get("model")? {
            Point::Model(m) => Some(*m),
            _ => None,
        }
    }

    fn steps(&self) -> Option<&'a Step> {
        match self.get("steps")? {
            Point::Steps(s) => Some(s),
            _ => None,
        }
    }

    fn number(&self, name: &str) -> Option<f64> {
        match self.get(name)? {
            Point::Number(v) => Some(*v),
            _ => None,
        }
    }

    fn count(&self, name: &str) -> Option<u64> {
        match self.get(name)? {
            Point::Count(n) => Some(*n),
            _ => None,
        }
    }

    /// A count a run holds as `u32`, saturating (bounds are checked as written).
    fn count_u32(&self, name: &str) -> Option<u32> {
        self.count(name)
            .map(|v| u32::try_from(v).unwrap_or(u32::MAX))
    }

    fn duration(&self, name: &str) -> Option<Duration> {
        match self.get(name)? {
            Point::Duration(d) => Some(*d),
            _ => None,
        }
    }

    fn connections(&self) -> Option<ConnectionKind> {
        match self.get("connections")? {
            Point::Connections(c) => Some(*c),
            _ => None,
        }
    }

    fn worker(&self) -> Option<WorkerKind> {
        match self.get("worker")? {
            Point::Worker(w) => Some(*w),
            _ => None,
        }
    }
}

fn counts(name: &str, v: &Option<OneOrMany<Count>>) -> Option<Axis> {
    v.as_ref()
        .map(|v| Axis::new(name, v.values().iter().map(|c| Point::Count(c.0)).collect()))
}

/// A closed-loop or held preset refuses a target's own `rate`.
fn closed_loop(file: &PresetFile) -> bool {
    file.load
        .as_ref()
        .is_some_and(|l| matches!(l.driver, DriverKind::Closed | DriverKind::Held))
}

/// TOML published numbers as JSON, for the report.
fn toml_to_json(v: toml::Value) -> serde_json::Value {
    match v {
        toml::Value::String(s) => s.into(),
        toml::Value::Integer(i) => i.into(),
        toml::Value::Float(f) => {
            serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, Into::into)
        }
        toml::Value::Boolean(b) => b.into(),
        toml::Value::Datetime(d) => d.to_string().into(),
        toml::Value::Array(a) => a.into_iter().map(toml_to_json).collect(),
        toml::Value::Table(t) => t.into_iter().map(|(k, v)| (k, toml_to_json(v))).collect(),
    }
}
