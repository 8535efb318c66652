//! A runtime folder's manifest (`runtimes/<name>/runtime.toml`, described in
//! `runtimes/README.md`): how to build and start the runtime's targets, the
//! models it serves with the knobs each reads, its own defaults, the
//! backends it can call and its options. The lab reads nothing else of a
//! runtime, so adding one adds a folder, not code. Where the runtime
//! folders are is [`root`]; what a runtime's defaults make of a model's
//! knobs, [`knobs`].

mod knobs;
mod root;

pub use root::{available, find_root};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use iolab_model::attack::HeldKind;
use iolab_model::steps::BackendKind;
use iolab_model::{ModelKind, ModelParams, Runtime};

use super::error::TargetError;

/// The file that marks a checkout's runtime folders.
/// Longest manifest read (a manifest is a few dozen lines).
const MAX_MANIFEST: u64 = 64 * 1024;

/// What a runtime's targets do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuntimeKind {
    /// Servers of the target contract.
    #[default]
    Http,
    /// Batch runners: a spec in, an `iolab.batch/1` document out.
    Batch,
}

/// `runtimes/<name>/runtime.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The folder's name.
    pub name: String,
    /// One line on what it is.
    pub about: String,
    /// Servers, batch runners, or both (`kind = "http"`, `"batch"` or
    /// `["http", "batch"]`: one launcher that serves and, given `--spec`,
    /// runs a batch).
    #[serde(
        default = "default_kinds",
        rename = "kind",
        deserialize_with = "one_or_many"
    )]
    pub kinds: Vec<RuntimeKind>,
    /// Run in the folder before the first start (idempotent, fast when done).
    #[serde(default)]
    pub build: Vec<String>,
    /// The launcher, run in the folder.
    pub start: Vec<String>,
    /// Longest wait for the URL line and a 200 from `/health`.
    #[serde(default = "default_start_timeout")]
    pub start_timeout_s: u64,
    /// Requests the launcher sends itself before its URL line (`--warmup`).
    #[serde(default)]
    pub warmup: u32,
    /// It honours `--metrics-port` (a listener a busy pool cannot starve).
    #[serde(default)]
    pub separate_metrics: bool,
    /// One interpreter lock per process (CPython): threads compute one at a time.
    #[serde(default)]
    pub gil: bool,
    /// The io steps it can serve (`sleep`, `http`, `pg`, `mc`).
    pub backends: Vec<String>,
    /// The held connections its HTTP targets serve (`held = ["ws", "sse"]`:
    /// `GET /ws`, `GET /events`); a held run of a kind not listed is
    /// refused before anything starts ([`Manifest::check_held`]).
    #[serde(default)]
    pub held: Vec<HeldKind>,
    /// Its own tests (run by the project's test command).
    #[serde(default)]
    pub test: Vec<String>,
    /// The models it serves.
    pub models: BTreeMap<String, ModelEntry>,
    /// Runtime options beyond the knobs (boolean flags, e.g. `synchronized`).
    #[serde(default)]
    pub options: BTreeMap<String, OptionEntry>,
    /// What the runtime's own configuration calls a knob, for every model
    /// (`pg_pool = "HikariCP maximumPoolSize"`); a model's `settings` win.
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
    /// The folder it was read from.
    #[serde(skip)]
    pub dir: PathBuf,
}

/// One model a runtime serves.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelEntry {
    /// How the runtime serves it, in a phrase.
    #[serde(default)]
    pub about: String,
    /// Knobs it reads (the backend pools too, when it has those backends).
    #[serde(default)]
    pub knobs: Vec<String>,
    /// The runtime's own defaults where they differ from iolab's: a number
    /// or an expression of the machine's cores (`"max(cores, 4)"`).
    #[serde(default)]
    pub defaults: BTreeMap<String, super::expr::Default>,
    /// What the runtime's own configuration calls each knob for this model
    /// (`processes = "gunicorn --workers"`), for sentences and what-ifs.
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
}

/// A boolean option of a runtime, passed as a flag.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionEntry {
    /// The flag the launcher takes.
    pub flag: String,
    /// Models it applies to.
    pub models: Vec<String>,
    /// What it does.
    #[serde(default)]
    pub about: String,
}

fn default_start_timeout() -> u64 {
    60
}

fn default_kinds() -> Vec<RuntimeKind> {
    vec![RuntimeKind::Http]
}

/// `kind` as one name or a list of them.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<RuntimeKind>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(RuntimeKind),
        Many(Vec<RuntimeKind>),
    }
    let kinds = match OneOrMany::deserialize(d)? {
        OneOrMany::One(k) => vec![k],
        OneOrMany::Many(v) => v,
    };
    if kinds.is_empty() {
        return Err(serde::de::Error::custom(
            "kind = []: name what it runs, \"http\", \"batch\" or both",
        ));
    }
    Ok(kinds)
}

impl Manifest {
    /// Read the manifest of `runtime` from the checkout.
    pub fn load(runtime: &Runtime) -> Result<Manifest, TargetError> {
        Self::load_from(&find_root()?, runtime)
    }

    /// Read the manifest of `runtime` under `root`.
    pub fn load_from(root: &Path, runtime: &Runtime) -> Result<Manifest, TargetError> {
        let dir = root.join("runtimes").join(runtime.as_str());
        let path = dir.join("runtime.toml");
        if !path.is_file() {
            return Err(TargetError::UnknownRuntime {
                runtime: runtime.to_string(),
                path,
                here: available(root).join(", "),
            });
        }
        let text = read_capped(&path)?;
        let fault = |why: String| TargetError::Manifest {
            path: path.clone(),
            why,
        };
        let mut m: Manifest = toml::from_str(&text).map_err(|e| fault(one_line(&e)))?;
        m.dir = dir;
        m.validate().map_err(fault)?;
        Ok(m)
    }

    /// What a manifest says that cannot be: the reason is the manifest
    /// error's text (reported under the manifest's path, and never matched
    /// on), so a String is its whole content.
    fn validate(&self) -> Result<(), String> {
        if self.start.is_empty() {
            return Err("`start` is empty: give the launcher's argv".into());
        }
        for (name, entry) in &self.models {
            let model: ModelKind = name.parse().map_err(|e| format!("models.{name}: {e}"))?;
            let named = entry.knobs.iter().chain(entry.defaults.keys());
            for k in named.chain(entry.settings.keys()) {
                if iolab_model::knob::knob(k).is_none() {
                    return Err(format!(
                        "models.{model}: unknown knob '{k}' (expected one of: {})",
                        iolab_model::knob::knob_names()
                    ));
                }
            }
        }
        for k in self.settings.keys() {
            if iolab_model::knob::knob(k).is_none() {
                return Err(format!(
                    "settings: unknown knob '{k}' (expected one of: {})",
                    iolab_model::knob::knob_names()
                ));
            }
        }
        if let Some(k) = self.held.iter().find(|k| **k == HeldKind::Grpc) {
            return Err(format!(
                "held = [\"{}\"]: held lists the contract's routes (\"ws\" for GET /ws, \"sse\" for GET /events); a gRPC streaming method is the service's own",
                k.as_str()
            ));
        }
        if !self.held.is_empty() && !self.runs(RuntimeKind::Http) {
            return Err(
                "held = [...] names routes of HTTP targets: add kind = \"http\" or remove it"
                    .into(),
            );
        }
        for b in &self.backends {
            BackendKind::named(b).ok_or_else(|| {
                format!("backends: unknown backend '{b}' ({})", BackendKind::names())
            })?;
        }
        Ok(())
    }

    /// The entry of `model`, or one line naming the models it has.
    pub fn model(&self, model: ModelKind) -> Result<&ModelEntry, TargetError> {
        self.models.get(model.as_str()).ok_or_else(|| {
            let names: Vec<&str> = self.models.keys().map(String::as_str).collect();
            TargetError::NoModel {
                model: model.to_string(),
                runtime: self.name.clone(),
                serves: names.join(", "),
            }
        })
    }

    /// Check `params` and `options` apply to `model` here.
    pub fn check(
        &self,
        model: ModelKind,
        params: &ModelParams,
        options: &[String],
    ) -> Result<(), TargetError> {
        let entry = self.model(model)?;
        for (k, _) in params.set_knobs() {
            if !entry.knobs.iter().any(|n| n == k.name) {
                return Err(TargetError::KnobNotRead {
                    knob: k.name,
                    runtime: self.name.clone(),
                    model: model.to_string(),
                    reads: list_or_none(&entry.knobs),
                });
            }
        }
        for o in options {
            let opt = self.options.get(o).ok_or_else(|| TargetError::NotOption {
                option: o.clone(),
                runtime: self.name.clone(),
            })?;
            if !opt.models.iter().any(|m| m == model.as_str()) {
                return Err(TargetError::OptionNotApplied {
                    option: o.clone(),
                    runtime: self.name.clone(),
                    model: model.to_string(),
                    applies: opt.models.join(", "),
                });
            }
        }
        Ok(())
    }

    /// Does it run targets of this kind?
    pub fn runs(&self, kind: RuntimeKind) -> bool {
        self.kinds.contains(&kind)
    }

    /// Refuse a backend the runtime has no client for.
    pub fn check_backend(&self, kind: BackendKind) -> Result<(), TargetError> {
        if self.backends.iter().any(|b| b == kind.as_str()) {
            return Ok(());
        }
        Err(TargetError::NoClient {
            runtime: self.name.clone(),
            kind: kind.to_string(),
            calls: self.backends.join(", "),
        })
    }

    /// Refuse a held run (`/ws` or `/events`) the runtime does not serve.
    pub fn check_held(&self, kind: HeldKind) -> Result<(), TargetError> {
        if self.held.contains(&kind) {
            return Ok(());
        }
        Err(TargetError::NoHeld {
            runtime: self.name.clone(),
            kind: kind.as_str(),
            route: kind.route(),
            held: format!(
                "{:?}",
                self.held.iter().map(|k| k.as_str()).collect::<Vec<_>>()
            ),
        })
    }

    /// Longest wait for a target to start.
    pub fn start_timeout(&self) -> Duration {
        Duration::from_secs(self.start_timeout_s.max(1))
    }

    /// The launcher's argv, its program resolved against the folder.
    pub fn launcher(&self) -> Vec<String> {
        resolve(&self.dir, &self.start)
    }
}

/// `argv[0]` resolved against `dir` when it is a relative path (`./start`).
pub(crate) fn resolve(dir: &Path, argv: &[String]) -> Vec<String> {
    let mut out = argv.to_vec();
    if let Some(p) = out.first_mut() {
        if p.starts_with("./") || p.starts_with("../") {
            *p = dir.join(&*p).display().to_string();
        }
    }
    out
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "no knobs".into()
    } else {
        v.join(", ")
    }
}

fn read_capped(path: &Path) -> Result<String, TargetError> {
    use std::io::Read;
    let read = |why| TargetError::Read {
        path: path.to_path_buf(),
        why,
    };
    let f = std::fs::File::open(path).map_err(read)?;
    let mut text = String::new();
    f.take(MAX_MANIFEST + 1)
        .read_to_string(&mut text)
        .map_err(read)?;
    if text.len() as u64 > MAX_MANIFEST {
        return Err(TargetError::TooLarge {
            path: path.to_path_buf(),
            max: MAX_MANIFEST,
        });
    }
    Ok(text)
}

fn one_line(e: &toml::de::Error) -> String {
    e.to_string().lines().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
