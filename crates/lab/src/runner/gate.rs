//! The verify gate: the contract checked once per distinct target before it
//! is measured, and, with real backends in the steps, that the target really
//! calls them. A custom command's target (a user's own program) speaks the
//! contract too; its report says so.

use std::time::Duration;

use iolab_model::experiment::{HttpWork, RunSpec};
use iolab_model::verify::VerifyReport;

use super::Ctx;
use crate::progress::Stage;
use crate::services::Needs;
use crate::targets::Target;

/// Why a target did not pass its gate (the run's outcome says it).
#[derive(Debug, thiserror::Error)]
pub(super) enum GateError {
    /// The target could not be verified at all.
    #[error("cannot verify {url}: {why}")]
    Cannot {
        /// The target.
        url: String,
        /// Why.
        why: iolab_verify::VerifyError,
    },
    /// Verified, with nothing checked.
    #[error("no checks ran")]
    NoChecks,
    /// The checks that failed, with their details.
    #[error("{0}")]
    Failed(String),
}

impl Ctx<'_> {
    /// Verify `target` (or reuse the report of an identical one). A report
    /// that did not pass goes into `report` too; an error means the target
    /// could not be verified at all.
    pub(super) fn gate(
        &self,
        spec: &RunSpec,
        w: &HttpWork,
        target: &Target,
        report: &mut Option<VerifyReport>,
    ) -> Result<(), GateError> {
        self.observer.stage(spec, Stage::Verifying);
        let r = self.verify(spec, w, &target.url)?;
        let passed = r.passed();
        let failed: Vec<String> = r
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| format!("{} ({})", c.name, c.detail))
            .collect();
        *report = Some(r);
        match (passed, failed.is_empty()) {
            (true, _) => Ok(()),
            (false, true) => Err(GateError::NoChecks),
            (false, false) => Err(GateError::Failed(failed.join("; "))),
        }
    }

    fn verify(&self, spec: &RunSpec, w: &HttpWork, url: &str) -> Result<VerifyReport, GateError> {
        let counted = self.backends.only(Needs::of_steps(&w.steps).kinds());
        let key = format!(
            "{}|{}|{:?}|{:?}|{:?}|{:?}",
            spec.model, spec.runtime, spec.params, spec.coordinates, w.command, counted
        );
        if let Some(r) = self.verified.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(r);
        }
        // Bounded in all and stopped by Ctrl-C: a target that answers
        // /health but hangs /work cannot hold the run.
        let opts = iolab_verify::VerifyOptions {
            model: Some(spec.model.as_str().to_string()),
            timeout: Duration::from_secs(10),
            deadline: iolab_verify::DEFAULT_DEADLINE,
            cancel: Some(self.opts.cancel.clone()),
            http2: false,
        };
        let cannot = |why| GateError::Cannot {
            url: url.to_string(),
            why,
        };
        let mut r = iolab_verify::verify(url, &opts).map_err(cannot)?;
        if !counted.is_empty() {
            let checks = iolab_verify::verify_backends(url, &counted, &opts).map_err(cannot)?;
            r.checks.extend(checks);
        }
        if r.passed() {
            if let Ok(mut m) = self.verified.lock() {
                m.insert(key, r.clone());
            }
        }
        Ok(r)
    }
}
