//! [`Runtime`]: where a target runs. `rust` is built into the iolab binary;
//! every other name is a folder under `runtimes/` whose manifest the lab reads
//! (`jvm`, `node`, `ruby`, `python`, `scala`, `play`), so adding a runtime
//! adds no variant here.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a target runs: `rust` (built in) or the name of a runtime folder.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Runtime(String);

impl Default for Runtime {
    fn default() -> Self {
        Runtime::rust()
    }
}

/// A runtime name that is not a plain folder name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("runtime '{0}' is not a runtime name: use rust or a folder under runtimes/ (e.g. jvm, node, python)")]
pub struct RuntimeNameError(pub String);

impl Runtime {
    /// The built-in runtime.
    pub fn rust() -> Runtime {
        Runtime("rust".into())
    }

    /// A runtime by name, checked to be a plain folder name (`[a-z0-9-]`).
    pub fn named(name: &str) -> Result<Runtime, RuntimeNameError> {
        let ok = !name.is_empty()
            && name.len() <= 32
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            Ok(Runtime(name.to_string()))
        } else {
            Err(RuntimeNameError(name.to_string()))
        }
    }

    /// Built into the iolab binary?
    pub fn is_rust(&self) -> bool {
        self.0 == "rust"
    }

    /// Its name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The knobs of one run as its runtime has them: each knob's value, whether
/// the run set it or the runtime's default filled it in, what the runtime's
/// own configuration calls it, and the rule of that default. A runtime folder
/// declares these in its manifest (`runtimes/<name>/runtime.toml`: a model's
/// `defaults` and `settings`); the built-in runtime in the knob table
/// ([`crate::knob::KNOBS`]). Sentences and what-ifs name a knob through this
/// ("gunicorn --backlog 2048"), so a runtime's defaults are written once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuntimeKnobs {
    /// The runtime they belong to.
    pub runtime: Runtime,
    /// Every knob the model reads or the runtime defaults, in the knob table's order.
    pub knobs: Vec<KnobOrigin>,
}

/// One knob of [`RuntimeKnobs`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KnobOrigin {
    /// iolab's name of the knob (`processes`).
    pub knob: String,
    /// Its value on the run's machine (`None`: no limit).
    pub value: Option<u32>,
    /// The run set it; otherwise the runtime's default filled it in.
    pub set: bool,
    /// What the runtime's own configuration calls it (`gunicorn --workers`).
    pub setting: String,
    /// The rule of the runtime's default (`2 * cores + 1`, `2048`, `no limit`).
    pub default: String,
}

impl RuntimeKnobs {
    /// The built-in runtime's knobs for `model` with `params` on `cores` cores:
    /// the knob table's defaults, named by `iolab serve`'s flags.
    pub fn built_in(model: crate::ModelKind, params: &crate::ModelParams, cores: u32) -> Self {
        let knobs = crate::knob::KNOBS
            .iter()
            .filter(|k| model.reads(k.name))
            .map(|k| {
                // Only prefork starts a process per core unless told; the
                // other built-in models run in one (their shapes read
                // `processes.unwrap_or(1)`), and their sentence says so.
                let one_process = k.name == "processes" && model != crate::ModelKind::Prefork;
                KnobOrigin {
                    knob: k.name.to_string(),
                    value: match one_process {
                        true => (k.get)(params).or(Some(1)),
                        false => params.value(k, cores),
                    },
                    set: (k.get)(params).is_some(),
                    setting: format!("iolab serve {}", k.flag()),
                    default: if one_process {
                        "1".to_string()
                    } else {
                        k.default.rule()
                    },
                }
            })
            .collect();
        RuntimeKnobs {
            runtime: Runtime::rust(),
            knobs,
        }
    }

    /// The entry of `knob`, when the model reads it or the runtime defaults it.
    pub fn get(&self, knob: &str) -> Option<&KnobOrigin> {
        self.knobs.iter().find(|k| k.knob == knob)
    }

    /// The knob in the runtime's words, value and origin: `gunicorn --workers 5,
    /// its default 2 * cores + 1` or `gunicorn --workers 9, as set`.
    pub fn phrase(&self, knob: &str) -> Option<String> {
        self.get(knob).map(KnobOrigin::phrase)
    }

    /// What sizes `model`'s capacity here, in the runtime's words: the
    /// phrases of its sizing knobs that were set or are not 1, joined by `; `
    /// (`gunicorn --workers 5, its default 2 * cores + 1`). Empty when none.
    pub fn sizing(&self, model: crate::ModelKind) -> String {
        let parts: Vec<String> = model
            .def()
            .sized_by
            .iter()
            .filter_map(|k| self.get(k.def().name))
            .filter(|k| k.set || k.value != Some(1))
            .map(KnobOrigin::phrase)
            .collect();
        parts.join("; ")
    }
}

impl KnobOrigin {
    /// The value as a sentence writes it.
    pub fn value_text(&self) -> String {
        self.value.map_or_else(
            || "no limit".to_string(),
            |v| crate::units::thousands(u64::from(v)),
        )
    }

    /// `gunicorn --workers 5, its default 2 * cores + 1`; a rule that is the
    /// number itself is not repeated (`gunicorn --backlog 2,048, its default`).
    pub fn phrase(&self) -> String {
        let v = self.value_text();
        if self.set {
            format!("{} {v}, as set", self.setting)
        } else if self.default.replace(',', "") == v.replace(',', "") {
            format!("{} {v}, its default", self.setting)
        } else {
            format!("{} {v}, its default {}", self.setting, self.default)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35: the built-in pool's defaults line said `--processes 2, its
    /// default cores` while its capacity was computed with one process.
    #[test]
    fn r35_only_prefork_defaults_to_a_process_per_core() {
        let none = crate::ModelParams::default();
        let pool = RuntimeKnobs::built_in(crate::ModelKind::Pool, &none, 2);
        assert_eq!(
            pool.phrase("processes").unwrap(),
            "iolab serve --processes 1, its default"
        );
        assert!(!pool.sizing(crate::ModelKind::Pool).contains("processes"));
        let prefork = RuntimeKnobs::built_in(crate::ModelKind::Prefork, &none, 2);
        assert_eq!(
            prefork.phrase("processes").unwrap(),
            "iolab serve --processes 2, its default cores"
        );
    }

    #[test]
    fn names_are_folder_names_and_serialize_plainly() {
        assert!(Runtime::default().is_rust());
        assert_eq!(Runtime::named("node").unwrap().as_str(), "node");
        assert!(Runtime::named("../etc").is_err());
        assert!(Runtime::named("").is_err());
        let v = serde_json::to_value(Runtime::named("jvm").unwrap()).unwrap();
        assert_eq!(v, "jvm");
        let r: Runtime = serde_json::from_str("\"rust\"").unwrap();
        assert!(r.is_rust());
    }
}
