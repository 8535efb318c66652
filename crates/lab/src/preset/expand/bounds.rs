//! Every run a preset expands to, checked as the run itself will check it:
//! the target's checks, the machine's thread limit for thread-sized knobs,
//! and the load through [`check_http`] (every bound of
//! [`iolab_model::limits`], then the generator's own validation) or the
//! batch through [`limits::check_batch`] and the machine's thread limit. `--dry-run` expands presets too,
//! so it refuses exactly what a run would, naming the field (hence the file
//! and line), never a command-line flag.

use iolab_model::experiment::{RunSpec, Work};
use iolab_model::limits::{self, Field};

use super::super::file::TargetSection;
use super::{fault, FieldError};
use crate::runner::check_http;

/// Check run `spec` of `[[targets]]` table `ti` (`t`) at time-scale `scale`;
/// `scale_flag` says the scale came from `--scale`, not the preset's own
/// `scale` field.
pub(super) fn check_run(
    ti: usize,
    t: &TargetSection,
    spec: &RunSpec,
    scale: f64,
    scale_flag: bool,
) -> Result<(), FieldError> {
    crate::targets::check(spec).map_err(|e| fault(format!("targets[{ti}].model"), e))?;
    crate::machine::check_task_knobs(&spec.params)
        .map_err(|(knob, e)| fault(format!("targets[{ti}].{knob}"), e))?;
    match &spec.work {
        Work::Http(w) => check_http(w).map_err(|(field, message)| {
            // A target's own rate replaces the load's.
            let field = if field == Field::Rate.preset() && t.rate.is_some() {
                format!("targets[{ti}].rate")
            } else {
                field.to_string()
            };
            let scaled = [
                Field::Rate,
                Field::Duration,
                Field::Timeout,
                Field::Interval,
            ]
            .iter()
            .any(|f| f.preset() == field || field.ends_with(".rate"));
            if scaled && scale != 1.0 && scale_flag {
                // The flag the user typed is the cause, not the preset's line
                // (issue 49 finding 21: `--scale 1e-300` blamed `load.rate`
                // with a 300-digit rate). A preset's own `scale` field stays
                // named by its field and line (r16_12).
                fault("--scale", scale_blame(scale, &field, &message))
            } else if scaled && scale != 1.0 {
                fault(field, format!("{message} (at time-scale {scale})"))
            } else {
                fault(field, message)
            }
        }),
        Work::Batch(b) => limits::check_batch(b)
            .and_then(|()| {
                crate::machine::check_batch_tasks(b).map_err(|(field, e)| (field, e.to_string()))
            })
            .map_err(|(field, m)| fault(format!("batch.{field}"), m)),
    }
}

/// `--scale F makes FIELD RULE: give a factor nearer 1`, the factor short
/// (`1e-300`, not 300 digits) and the rule without the scaled value.
fn scale_blame(scale: f64, field: &str, message: &str) -> String {
    let factor = match scale != 0.0 && scale.abs() < 1e-3 {
        true => format!("{scale:e}"),
        false => scale.to_string(),
    };
    // "X req/s is above ...": keep the rule, drop the value.
    let rule = message.split_once(" is ").map_or(message, |(_, r)| r);
    format!(
        "{factor} makes {field} {}: give a factor nearer 1",
        iolab_model::text::printable(rule)
    )
}
