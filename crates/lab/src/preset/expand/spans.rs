//! `[spans]`: which runs record who held what, and for how many requests.
//! `sample = N` asks every run for the first N requests (tasks); `when = {
//! rate = 400 }` narrows it to the runs at those coordinates (any swept axis,
//! `model` or `target`), so a sweep draws its pictures where they teach.

use iolab_model::experiment::RunSpec;
use serde_json::Value;

use super::super::file::SpansSection;
use super::{fault, toml_to_json, FieldError};

/// Set `spans` on the runs `section` picks; refuse a sample out of range, a
/// coordinate no run has, or a `when` that picks nothing.
pub(super) fn apply(section: &SpansSection, runs: &mut [RunSpec]) -> Result<(), FieldError> {
    let size = iolab_model::spans::check_size(section.sample.u32())
        .map_err(|e| fault("spans.sample", e))?;
    let when: Vec<(String, Value)> = section
        .when
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), toml_to_json(v.clone())))
        .collect();
    for (key, _) in &when {
        if !runs.iter().any(|r| r.coordinates.contains_key(key)) {
            let mut names: Vec<&str> = runs
                .iter()
                .flat_map(|r| r.coordinates.keys().map(String::as_str))
                .collect();
            names.sort_unstable();
            names.dedup();
            return Err(fault(
                format!("spans.when.{key}"),
                format!(
                    "no run has a coordinate '{key}' (they have: {})",
                    names.join(", ")
                ),
            ));
        }
    }
    let mut picked = 0;
    for r in runs.iter_mut() {
        if when
            .iter()
            .all(|(k, v)| r.coordinates.get(k).is_some_and(|c| same(c, v)))
        {
            r.spans = Some(size);
            picked += 1;
        }
    }
    if picked == 0 {
        return Err(fault(
            "spans.when",
            "no run is at those coordinates: give values the sweep has (e.g. a rate from load.rate)",
        ));
    }
    Ok(())
}

/// Coordinates compare as numbers when both are (400 and 400.0 are one rate).
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}
