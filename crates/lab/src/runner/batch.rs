//! Batch runs: in this process (the built-in executors, `iolab_batch`) or
//! on a batch runtime (`runtimes/<name>` with `kind = "batch"`: the same spec
//! in, the same `iolab.batch/1` document out). The median repetition by
//! total time is the run's result.

use std::sync::Arc;

use iolab_model::batch::{BatchResult, BatchSpec};
use iolab_model::experiment::RunSpec;
use iolab_model::runs::{Outcome, RunRecord};

use super::spans::SpansError;
use super::Ctx;
use crate::progress::Stage;
use crate::targets::{Launch, TargetError};

impl Ctx<'_> {
    pub(super) fn batch_run(
        &self,
        index: usize,
        spec: &RunSpec,
        b: &BatchSpec,
        launch: &Launch,
    ) -> RunRecord {
        let once: Box<dyn Fn() -> Result<BatchResult, TargetError>> = match launch {
            Launch::Runtime(m) => {
                Box::new(move || crate::targets::runtime::run_batch(m, spec, b, &self.opts.cancel))
            }
            _ => match self.in_process(spec, b) {
                Ok(f) => f,
                Err(e) => {
                    return RunRecord::new(
                        spec.clone(),
                        Outcome::Skipped {
                            detail: e.to_string(),
                        },
                    )
                }
            },
        };
        let mut results: Vec<BatchResult> = Vec::new();
        for rep in 0..self.plan.reps.max(1) {
            if self.opts.cancelled() {
                break;
            }
            self.observer
                .run_started(index, self.plan.runs.len(), spec, rep);
            self.observer.stage(spec, Stage::Batch);
            match once() {
                Ok(r) => results.push(r),
                Err(e) => {
                    return RunRecord::new(
                        spec.clone(),
                        Outcome::StartFailed {
                            detail: e.to_string(),
                        },
                    )
                }
            }
        }
        let mut record = RunRecord::new(spec.clone(), Outcome::Completed);
        if self.opts.cancelled() {
            record.outcome = Outcome::Interrupted;
        }
        results.sort_by(|a, b| a.total_s.total_cmp(&b.total_s));
        if let Some(m) = results.get(results.len().saturating_sub(1) / 2).cloned() {
            if m.tasks == 0 {
                if let Some(f) = &m.failure {
                    record.outcome = Outcome::Skipped { detail: f.clone() };
                }
            }
            record.batch = Some(m);
        }
        if spec.spans.is_some() {
            // In runs.json a run's timeline is its `spans`, batch or served.
            let measured = record.batch.as_mut().and_then(|b| b.spans.take());
            let measured = measured.ok_or_else(|| match launch {
                Launch::Runtime(m) => SpansError::BatchRuntime(m.name.clone()),
                _ => SpansError::BatchNone,
            });
            record.spans = Some(super::spans::record(measured, spec, self.cores));
        }
        record
    }

    /// The built-in executors; IO tasks on a real backend use the
    /// experiment's services, through a pool of `pg_pool` connections (the
    /// target knob) like a target's.
    fn in_process<'b>(
        &'b self,
        spec: &'b RunSpec,
        b: &'b BatchSpec,
    ) -> Result<Box<dyn Fn() -> Result<BatchResult, TargetError> + 'b>, iolab_batch::io::IoError>
    {
        let io = if b.io_backend.is_sleep() {
            iolab_batch::io::Io::sleep()
        } else {
            let config = iolab_backends::BackendConfig::new(self.backends.clone(), &spec.params);
            iolab_batch::io::Io::new(
                b.io_backend,
                Arc::new(iolab_backends::Backends::new(config)),
            )?
        };
        Ok(Box::new(move || {
            Ok(iolab_batch::run_traced(
                b,
                spec.model,
                &spec.params,
                &io,
                spec.spans,
                &self.opts.cancel,
            ))
        }))
    }
}
