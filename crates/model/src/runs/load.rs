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
    for run in &mut file.runs {
        for a in run.attack.iter_mut().chain(run.reps.iter_mut()) {
            a.refresh_rates();
        }
        // The repetitions' goodput range, on the same definition.
        if let (Some(s), false) = (run.spread.as_mut(), run.reps.is_empty()) {
            let g = run.reps.iter().map(|a| a.throughput_rps.goodput);
            s.goodput_rps = (
                g.clone().fold(f64::INFINITY, f64::min),
                g.fold(f64::NEG_INFINITY, f64::max),
            );
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder_with(runs_json: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(RUNS_JSON), runs_json).unwrap();
        dir
    }

    #[test]
    fn each_fault_names_the_file_and_what_is_wrong() {
        let missing = tempfile::tempdir().unwrap();
        let e = load(missing.path()).unwrap_err().to_string();
        assert!(
            e.starts_with("cannot read ") && e.contains("runs.json"),
            "{e}"
        );
        let e = load(folder_with("{not json").path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not valid JSON"), "{e}");
        let e = load(folder_with(r#"{"schema":"iolab.attack/1"}"#).path()).unwrap_err();
        assert!(e.to_string().contains("has schema 'iolab.attack/1'"), "{e}");
        let e = load(folder_with(r#"{"schema":"iolab.runs/1"}"#).path()).unwrap_err();
        assert!(e.to_string().contains("does not match iolab.runs/1"), "{e}");
    }

    /// Regression (issue 16, `iolab report /dev/zero`): an endless file
    /// fails fast instead of growing memory; since issue 30 a device is
    /// refused before a byte is read.
    #[test]
    fn dev_zero_is_refused_at_once() {
        let t = std::time::Instant::now();
        let e = load(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("is a character device, not a file"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(5));
    }
}
