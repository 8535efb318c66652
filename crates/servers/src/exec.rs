//! Running a workload on the calling thread, blocking it (thread models,
//! `loop-blocking`). How `par(...)` gets its concurrency is the one thing the
//! models do differently, so it is a [`Fanout`] each model supplies.

use bytes::Bytes;
use iolab_backends::{BackendError, Backends};
use iolab_model::cpu::leibniz;
use iolab_model::Step;

/// Why a workload failed, as the status and message a target answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepError {
    /// HTTP status (400 unconfigured backend, 502/503 backend trouble, 503 no thread).
    pub status: u16,
    /// The message for the `error` field.
    pub message: String,
}

impl From<BackendError> for StepError {
    fn from(e: BackendError) -> Self {
        StepError {
            status: e.status(),
            message: e.to_string(),
        }
    }
}

/// What a step that succeeded hands back: the value of the last `mc` get it
/// made (in the order the steps are written), for `/work?...&body=value`;
/// `None` when it made none. The value is the buffer the client read into, so
/// passing it up costs no copy.
pub type Fetched = Option<Bytes>;

/// The result of one step.
pub type StepResult = Result<Fetched, StepError>;

/// A child runner handed to a [`Fanout`]: runs one child step to completion.
pub type RunChild<'a> = dyn Fn(&Step) -> StepResult + Sync + 'a;

/// How a model runs the children of `par(...)` when steps block threads.
pub trait Fanout: Sync {
    /// Run every child (all of them, even after one fails) and give the first error.
    fn par(&self, children: &[Step], run: &RunChild<'_>) -> StepResult;
}

/// `par(...)` in sequence on the one thread (`sequential`, `loop-blocking`):
/// those models have no other thread to give a child.
#[derive(Debug, Clone, Copy, Default)]
pub struct InOrder;

impl Fanout for InOrder {
    fn par(&self, children: &[Step], run: &RunChild<'_>) -> StepResult {
        first_error(children.iter().map(run))
    }
}

/// `par(...)` on one new scoped OS thread per child but the first, which runs
/// on the calling thread (`thread-per-request`). If the OS refuses a thread the
/// child fails with 503, like the request itself would.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScopedThreads;

impl Fanout for ScopedThreads {
    fn par(&self, children: &[Step], run: &RunChild<'_>) -> StepResult {
        let Some((first, rest)) = children.split_first() else {
            return Ok(None);
        };
        // A sampled request's child records its spans on its own thread.
        let tag = iolab_spans::current();
        std::thread::scope(|scope| {
            let handles: Vec<_> = rest
                .iter()
                .map(|child| {
                    let tag = tag.clone();
                    std::thread::Builder::new()
                        .stack_size(crate::THREAD_STACK)
                        .spawn_scoped(scope, move || {
                            let _current = tag.as_ref().map(iolab_spans::Tag::enter);
                            run(child)
                        })
                })
                .collect();
            let mine = run(first);
            let others = handles.into_iter().map(|h| match h {
                Ok(h) => h.join().unwrap_or_else(|_| {
                    Err(StepError {
                        status: 500,
                        message: "a par(...) child panicked".into(),
                    })
                }),
                Err(e) => Err(StepError {
                    status: 503,
                    message: format!("the OS refused a thread for a par(...) child: {e}"),
                }),
            });
            first_error(std::iter::once(mine).chain(others))
        })
    }
}

/// Run `step` on this thread, blocking it for every IO call.
pub fn run_blocking(step: &Step, backends: &Backends, fanout: &dyn Fanout) -> StepResult {
    match step {
        Step::Cpu { terms } => {
            leibniz(*terms);
            Ok(None)
        }
        Step::Io(call) => Ok(iolab_spans::held(|| backends.fetch_blocking(call))?),
        Step::Seq(children) => {
            let mut last = None;
            for child in children {
                last = run_blocking(child, backends, fanout)?.or(last);
            }
            Ok(last)
        }
        Step::Par(children) => fanout.par(children, &|s| run_blocking(s, backends, fanout)),
    }
}

/// Drain every result (in the order the steps are written) and keep the
/// first error; without one, the last value fetched.
pub fn first_error(results: impl Iterator<Item = StepResult>) -> StepResult {
    let mut out: StepResult = Ok(None);
    for r in results {
        out = match (out, r) {
            (Err(e), _) => Err(e),
            (Ok(_), Err(e)) => Err(e),
            (Ok(last), Ok(value)) => Ok(value.or(last)),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(v: &'static [u8]) -> StepResult {
        Ok(Some(Bytes::from_static(v)))
    }

    #[test]
    fn the_last_value_in_written_order_wins_and_the_first_error_beats_all() {
        let r = first_error([value(b"a"), Ok(None), value(b"b"), Ok(None)].into_iter());
        assert_eq!(r.unwrap().unwrap(), &b"b"[..]);
        let err = StepError {
            status: 502,
            message: "x".into(),
        };
        let r = first_error([value(b"a"), Err(err.clone()), value(b"b")].into_iter());
        assert_eq!(r.unwrap_err(), err);
        assert_eq!(first_error(std::iter::empty()).unwrap(), None);
    }
}
