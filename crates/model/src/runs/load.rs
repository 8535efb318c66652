//! Reading a `runs.json` back, from a results folder or the file itself: the
//! one loader `iolab report`, the lab and the tests use. Read with a size cap,
//! then checked for its schema tag before its shape, so each fault gets the
//! one line that tells the user what they passed.

use std::path::{Path, PathBuf};

use crate::files::read_capped;
use crate::runs::{RunsFile, RUNS_SCHEMA};

/// The file name of the runs inside a results folder.
pub const RUNS_JSON: &str = "runs.json";

/// Largest `runs.json` read: 100 times the largest the lab has written (a
/// showdown with telemetry is under 1 MiB).
pub const MAX_RUNS_JSON: u64 = 64 << 20;

/// Why a `runs.json` could not be loaded; each message is one line.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Missing, unreadable or over [`MAX_RUNS_JSON`].
    #[error("cannot read {}: {source} (pass a results folder written by 'iolab run')", path.display())]
    Read {
        /// The file tried.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not JSON at all.
    #[error("{} is not valid JSON: {source}", path.display())]
    Json {
        /// The file read.
        path: PathBuf,
        /// Where the JSON broke.
        source: serde_json::Error,
    },
    /// JSON, but another document.
    #[error("{} has schema '{found}', expected '{RUNS_SCHEMA}' (is it a runs.json written by 'iolab run'?)", path.display())]
    Schema {
        /// The file read.
        path: PathBuf,
        /// Its `schema` field (empty if none).
        found: String,
    },
    /// Tagged `iolab.runs/1` but not shaped like one.
    #[error("{} does not match {RUNS_SCHEMA}: {source}", path.display())]
    Shape {
        /// The file read.
        path: PathBuf,
        /// The first field that did not fit.
        source: serde_json::Error,
    },
}

/// `results/runs.json` for a results folder, else `results` itself.
pub fn runs_path(results: &Path) -> PathBuf {
    if results.is_dir() {
        results.join(RUNS_JSON)
    } else {
        results.to_path_buf()
    }
}

/// Load the runs of a results folder (or of a `runs.json` path).
pub fn load(results: &Path) -> Result<RunsFile, LoadError> {
    let path = runs_path(results);
    let bytes = match read_capped(&path, MAX_RUNS_JSON) {
        Ok(b) => b,
        Err(source) => return Err(LoadError::Read { path, source }),
    };
    let doc: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(source) => return Err(LoadError::Json { path, source }),
    };
    let found = doc.get("schema").and_then(|s| s.as_str()).unwrap_or("");
    if found != RUNS_SCHEMA {
        let found = found.to_string();
        return Err(LoadError::Schema { path, found });
    }
    let mut file: RunsFile =
        serde_json::from_value(doc).map_err(|source| LoadError::Shape { path, source })?;
    file.refresh_rates();
    Ok(file)
}

impl RunsFile {
    /// Every run's rates re-read on the one definition
    /// ([`AttackResult::refresh_rates`](crate::attack::AttackResult::refresh_rates)),
    /// the repetitions' goodput range with them: what a reader of a saved
    /// document sees is what a new run would say.
    pub fn refresh_rates(&mut self) {
        for run in &mut self.runs {
            for a in run.attack.iter_mut().chain(run.reps.iter_mut()) {
                a.refresh_rates();
            }
            if let (Some(s), false) = (run.spread.as_mut(), run.reps.is_empty()) {
                let g = run.reps.iter().map(|a| a.throughput_rps.goodput);
                s.goodput_rps = (
                    g.clone().fold(f64::INFINITY, f64::min),
                    g.fold(f64::NEG_INFINITY, f64::max),
                );
            }
        }
    }
}
