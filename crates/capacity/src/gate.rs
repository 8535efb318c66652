//! `iolab capacity --baseline OLD.json --max-drop 10%`: the earlier
//! document is read and checked before anything is measured (a capacity
//! document, the same objective, the same request to the same targets), so
//! a bad baseline costs no search; after the search each answer is held to
//! the baseline's ([`Gate`]).

use std::path::Path;

use iolab_model::capacity::{CapacityFile, Gate, GateCheck, Search, Slo, CAPACITY_SCHEMA};

/// Largest baseline read: 64 MiB, as docs/reliability.md says of every
/// document read back (a capacity document is a few hundred KiB).
const MAX_BASELINE: u64 = 64 << 20;

/// A `--baseline` that cannot be held to; one line naming the fault and
/// the fix.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// The file cannot be read.
    #[error("--baseline {path}: {why}")]
    Read {
        /// As given.
        path: String,
        /// Why.
        why: std::io::Error,
    },
    /// Not a capacity document.
    #[error("--baseline {0} is not an {CAPACITY_SCHEMA} document: give the capacity.json an earlier `iolab capacity` wrote")]
    NotOne(String),
    /// A capacity schema, but not its fields.
    #[error("--baseline {path} is not an {CAPACITY_SCHEMA} document: give the capacity.json an earlier `iolab capacity` wrote: {why}")]
    Fields {
        /// As given.
        path: String,
        /// The parser's word.
        why: serde_json::Error,
    },
    /// A figure no search finds.
    #[error("--baseline {path} holds a figure no search finds ({why}): give the capacity.json an `iolab capacity` wrote")]
    Figure {
        /// As given.
        path: String,
        /// Which figure.
        why: String,
    },
    /// Another objective.
    #[error("--baseline {path} was searched under the objective {theirs}, this search under {ours}: give the same --slo (or a baseline measured under it)")]
    Objective {
        /// As given.
        path: String,
        /// The baseline's objective.
        theirs: String,
        /// This search's.
        ours: String,
    },
    /// No capacity in it.
    #[error("--baseline {0} has no capacity to compare with (no rate met its objective): give a baseline whose search found one")]
    NoCapacity(String),
    /// No search of that name.
    #[error("--baseline {path} has no search named '{name}' (it has: {names}): give the baseline of the same preset")]
    NoSearch {
        /// As given.
        path: String,
        /// The search.
        name: String,
        /// Its searches.
        names: String,
    },
    /// That search found no capacity.
    #[error("--baseline {path}: its search '{name}' found no capacity to compare with: give a baseline whose search found one")]
    SearchNoCapacity {
        /// As given.
        path: String,
        /// The search.
        name: String,
    },
    /// Another request.
    #[error("--baseline {path} measured another request ({theirs}), this search sends {ours}: give the baseline of the same request")]
    Request {
        /// As given.
        path: String,
        /// The baseline's request.
        theirs: String,
        /// This search's.
        ours: String,
    },
}

impl iolab_model::HasExitKind for BaselineError {
    /// Checked before anything is measured: the user gives another baseline.
    fn exit_kind(&self) -> iolab_model::ExitKind {
        iolab_model::ExitKind::BadInput
    }
}

/// A baseline document, checked against the objective.
#[derive(Debug, Clone)]
pub struct Baseline {
    path: String,
    doc: CapacityFile,
}

/// Read `path` as the baseline for a search under `slo`; one line naming
/// the fault and the fix when it cannot be one.
pub fn load(path: &Path, slo: &Slo) -> Result<Baseline, BaselineError> {
    let shown = path.display().to_string();
    let bytes =
        iolab_model::files::read_capped(path, MAX_BASELINE).map_err(|why| BaselineError::Read {
            path: shown.clone(),
            why,
        })?;
    let not_one = || BaselineError::NotOne(shown.clone());
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| not_one())?;
    if value.get("schema").and_then(|s| s.as_str()) != Some(CAPACITY_SCHEMA) {
        return Err(not_one());
    }
    let doc: CapacityFile = serde_json::from_value(value).map_err(|why| BaselineError::Fields {
        path: shown.clone(),
        why,
    })?;
    doc.check_figures().map_err(|e| BaselineError::Figure {
        path: shown.clone(),
        why: e.to_string(),
    })?;
    if doc.slo.to_string() != slo.to_string() {
        return Err(BaselineError::Objective {
            path: shown,
            theirs: doc.slo.to_string(),
            ours: slo.to_string(),
        });
    }
    if doc.searches.iter().all(|s| s.capacity_rps.is_none()) {
        return Err(BaselineError::NoCapacity(shown));
    }
    Ok(Baseline { path: shown, doc })
}

/// A target's request without its scheme, host and port (a service started
/// again takes another port; the request is what must match).
fn request_key(target: &str) -> String {
    match target.find("://") {
        Some(i) => {
            let rest = &target[i + 3..];
            let path = rest.find('/').map_or("/", |j| &rest[j..]);
            format!(
                "{}{path}",
                &target[..target[..i].rfind(' ').map_or(0, |k| k + 1)]
            )
        }
        None => target.to_string(),
    }
}

impl Baseline {
    /// The baseline's search for `name` (the only one when it has one).
    fn search(&self, name: &str) -> Option<&Search> {
        match self.doc.searches.as_slice() {
            [one] if self.doc.searches.len() == 1 => Some(one),
            many => many.iter().find(|s| s.name == name),
        }
    }

    /// Refuse a search the baseline has no answer for, or whose request
    /// differs (`target` as the search record describes it; `None` when it
    /// is not known before the target starts).
    pub fn check(&self, name: &str, target: Option<&str>) -> Result<(), BaselineError> {
        let Some(b) = self.search(name) else {
            let names: Vec<&str> = self.doc.searches.iter().map(|s| s.name.as_str()).collect();
            return Err(BaselineError::NoSearch {
                path: self.path.clone(),
                name: name.to_string(),
                names: names.join(", "),
            });
        };
        if b.capacity_rps.is_none() {
            return Err(BaselineError::SearchNoCapacity {
                path: self.path.clone(),
                name: name.to_string(),
            });
        }
        if let Some(t) = target {
            if request_key(t) != request_key(&b.target) {
                return Err(BaselineError::Request {
                    path: self.path.clone(),
                    theirs: b.target.clone(),
                    ours: t.to_string(),
                });
            }
        }
        Ok(())
    }

    /// Each search's answer against the baseline's, at most `max_drop_pct`
    /// lost.
    pub fn gate(&self, searches: &[Search], max_drop_pct: f64) -> Gate {
        let checks: Vec<GateCheck> = searches
            .iter()
            .filter_map(|s| {
                let base = self.search(&s.name)?;
                let b = base.capacity_rps?;
                Some(
                    GateCheck::of(&s.name, b, s.capacity_rps, max_drop_pct)
                        .with_intervals(base.interval, s.interval),
                )
            })
            .collect();
        Gate {
            baseline: self.path.clone(),
            max_drop_pct,
            passed: checks.iter().all(|c| c.passed),
            checks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_compared_without_its_host_and_port() {
        assert_eq!(
            request_key("http://127.0.0.1:4000/work?steps=sleep:50"),
            "/work?steps=sleep:50"
        );
        assert_eq!(
            request_key("POST https://h:8443/api (1 headers, 2-byte body)"),
            "POST /api (1 headers, 2-byte body)"
        );
        assert_eq!(request_key("http://h:1"), "/");
    }
}
