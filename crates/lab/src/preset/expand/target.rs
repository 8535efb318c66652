//! `[[targets]]` tables: their own sweep axes (model, knobs, runtime options,
//! and the load axes a target replaces), the rules for their fields, and the
//! knobs of one run picked out of the axes.

use iolab_model::knob::{knob, knob_names, KNOBS};
use iolab_model::ModelParams;

use super::super::file::{PresetFile, Setting, TargetSection, WorkKind};
use super::super::sweep::{Axis, Point};
use super::{closed_loop, fault, FieldError, Pick};
use crate::targets::Manifest;

/// The fields a `[[targets]]` table has besides knobs and runtime options.
const FIELDS: &str =
    "model, label, runtime, command, steps, rate, url, request, health, pid, metrics, series, insecure";

/// A target's own axes: model, then each knob and option it sets.
pub(super) fn own_axes(t: &TargetSection) -> Vec<Axis> {
    let models = t.model.values().iter();
    let mut axes = vec![Axis::new(
        "model",
        models.map(|m| Point::Model(*m)).collect(),
    )];
    for (name, values) in &t.settings {
        let points = values.values().iter().map(|v| match v {
            Setting::Count(n) => Point::Count(*n),
            Setting::Flag(b) => Point::Flag(*b),
        });
        axes.push(Axis::new(name.as_str(), points.collect()));
    }
    axes.extend(overrides(t));
    axes
}

/// The load axes a target replaces with its own (`steps`, `rate`).
fn overrides(t: &TargetSection) -> Vec<Axis> {
    let mut axes = Vec::new();
    if let Some(steps) = &t.steps {
        let points = steps.values().iter().map(|s| Point::Steps(s.0.clone()));
        axes.push(Axis::new("steps", points.collect()));
    }
    if let Some(rate) = &t.rate {
        let points = rate.values().iter().map(|r| Point::Number(r.0));
        axes.push(Axis::new("rate", points.collect()));
    }
    axes
}

/// The target's own axes, then the common ones it does not replace.
pub(super) fn axes_with(t: &TargetSection, common: &[Axis]) -> Vec<Axis> {
    let own = own_axes(t);
    let replaced: Vec<String> = overrides(t).into_iter().map(|a| a.name).collect();
    let mut axes: Vec<Axis> = own
        .into_iter()
        .filter(|a| !replaced.contains(&a.name))
        .collect();
    for a in common {
        match overrides(t).into_iter().find(|o| o.name == a.name) {
            Some(o) => axes.push(o),
            None => axes.push(a.clone()),
        }
    }
    axes
}

/// The knobs of one run: the target's own (a `[batch]` axis of the same
/// name, E1's `workers`, sets the master, not a knob).
pub(super) fn params_of(pick: &Pick, t: &TargetSection) -> ModelParams {
    let mut p = ModelParams::default();
    for k in KNOBS.iter().filter(|k| t.settings.contains_key(k.name)) {
        (k.set)(&mut p, pick.count_u32(k.name));
    }
    p
}

/// The rules of one `[[targets]]` table that need no run picked out.
pub(super) fn check(i: usize, t: &TargetSection, file: &PresetFile) -> Result<(), FieldError> {
    let field = |f: &str| format!("targets[{i}].{f}");
    if file.kind == WorkKind::Batch && (t.steps.is_some() || t.rate.is_some()) {
        let f = if t.steps.is_some() { "steps" } else { "rate" };
        return Err(fault(
            field(f),
            "applies to HTTP presets only: a batch preset sets its tasks in [batch]",
        ));
    }
    if t.rate.is_some() && closed_loop(file) {
        return Err(fault(
            field("rate"),
            "applies to an open loop: set driver = \"open\" or remove it",
        ));
    }
    if t.settings.contains_key("workers")
        && file.batch.as_ref().is_some_and(|b| b.workers.is_some())
    {
        return Err(fault(
            field("workers"),
            "[batch] workers already sets the master's workers: remove one of the two",
        ));
    }
    if let Some(cmd) = &t.command {
        if cmd.is_empty() || cmd[0].trim().is_empty() {
            return Err(fault(
                field("command"),
                "give the program and its arguments, e.g. [\"java\", \"-jar\", \"t.jar\"]",
            ));
        }
        if file.kind == WorkKind::Batch {
            return Err(fault(
                field("command"),
                "batch runs happen in process or on a batch runtime; remove `command`",
            ));
        }
    }
    if let Some(label) = &t.label {
        if label.trim().is_empty() || label.contains(['/', ' ']) {
            return Err(fault(
                field("label"),
                "a label is one word without spaces or slashes",
            ));
        }
    }
    for (name, values) in &t.settings {
        check_setting(name, values.values(), t).map_err(|m| fault(field(name), m))?;
    }
    Ok(())
}

/// Why a setting of a target table cannot be used.
#[derive(Debug, thiserror::Error)]
enum SettingError {
    /// A knob out of range.
    #[error(transparent)]
    Knob(#[from] iolab_model::KnobError),
    /// A knob given true or false.
    #[error("{0} is a count, e.g. {0} = 8")]
    NotCount(String),
    /// The runtime's manifest cannot be read.
    #[error(transparent)]
    Target(#[from] crate::targets::TargetError),
    /// Neither a field, a knob nor an option.
    #[error(
        "unknown field '{name}': expected {FIELDS}, a knob ({}){theirs} (see presets/README.md)",
        knob_names()
    )]
    Unknown {
        /// The name.
        name: String,
        /// The runtime's options, when it has some.
        theirs: String,
    },
    /// An option given a count.
    #[error("{0} is an option: give true or false")]
    NotFlag(String),
}

/// A knob takes counts in its range; anything else must be an option of the
/// target's runtime, taking `true` or `false`.
fn check_setting(name: &str, values: &[Setting], t: &TargetSection) -> Result<(), SettingError> {
    if let Some(k) = knob(name) {
        for v in values {
            match v {
                Setting::Count(n) => {
                    k.check(*n)?;
                }
                Setting::Flag(_) => return Err(SettingError::NotCount(name.to_string())),
            }
        }
        return Ok(());
    }
    let options = if t.runtime.is_rust() || t.command.is_some() {
        Vec::new()
    } else {
        let m = Manifest::load(&t.runtime)?;
        m.options.keys().cloned().collect()
    };
    if !options.iter().any(|o| o == name) {
        let theirs = if options.is_empty() {
            String::new()
        } else {
            format!(
                ", or an option of runtime {}: {}",
                t.runtime,
                options.join(", ")
            )
        };
        return Err(SettingError::Unknown {
            name: name.to_string(),
            theirs,
        });
    }
    if values.iter().any(|v| !matches!(v, Setting::Flag(_))) {
        return Err(SettingError::NotFlag(name.to_string()));
    }
    Ok(())
}
