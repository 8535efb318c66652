//! Where an IO task's wait goes: the embedded timer (the default, as in E1
//! and E3) or one real call to a backend (`http` delay service, `pg_sleep` on
//! PostgreSQL), through the blocking client on thread executors and the
//! non-blocking one on event loops, so a batch can show what a real
//! connection pool changes (ten PostgreSQL connections cap every executor).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use iolab_backends::{BackendError, Backends};
use iolab_model::steps::{BackendKind, IoCall};

/// A batch's `io =` backend that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IoError {
    /// It takes no duration (`mc`).
    #[error("io = {0}: a batch IO task is a timed call; use {timed}", timed = BackendKind::timed().map(BackendKind::as_str).collect::<Vec<_>>().join(", "))]
    NotTimed(BackendKind),
    /// No address was given for it.
    #[error("io = {0}: no address for it; give {flag} (or set {env})", flag = iolab_backends::config_flag(*.0), env = .0.def().env)]
    NoAddress(BackendKind),
}

/// One IO task's call that failed (the task is counted failed; the first
/// is the batch's `failure` line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} call failed: {why}")]
pub struct CallFailed {
    /// The backend called.
    pub kind: BackendKind,
    /// Why.
    pub why: BackendError,
}

/// An IO task's backend and the clients to reach it.
#[derive(Debug, Clone)]
pub struct Io {
    kind: BackendKind,
    backends: Arc<Backends>,
    /// The first failed call of this batch, for its `failure` line.
    first_error: Arc<OnceLock<CallFailed>>,
}

impl Io {
    /// The embedded timer: needs nothing.
    pub fn sleep() -> Self {
        Io {
            kind: BackendKind::Sleep,
            backends: Arc::new(Backends::sleep_only()),
            first_error: Arc::default(),
        }
    }

    /// IO tasks call `kind` through `backends`; `mc` has no duration and is
    /// refused, as is a backend `backends` has no address for.
    pub fn new(kind: BackendKind, backends: Arc<Backends>) -> Result<Self, IoError> {
        if !kind.is_timed() {
            return Err(IoError::NotTimed(kind));
        }
        if !kind.is_sleep() && backends.config().address(kind).is_none() {
            return Err(IoError::NoAddress(kind));
        }
        Ok(Io {
            kind,
            backends,
            first_error: Arc::default(),
        })
    }

    /// The same clients with no failure recorded yet (one per batch run).
    pub fn fresh(&self) -> Self {
        Io {
            first_error: Arc::default(),
            ..self.clone()
        }
    }

    /// The first call that failed, if any.
    pub fn first_error(&self) -> Option<&CallFailed> {
        self.first_error.get()
    }

    fn failed(&self, why: BackendError) -> CallFailed {
        let e = CallFailed {
            kind: self.kind,
            why,
        };
        let _ = self.first_error.set(e.clone());
        e
    }

    /// Which backend IO tasks use.
    pub fn kind(&self) -> BackendKind {
        self.kind
    }

    /// The timer is the embedded one: executors may use their own timers.
    pub fn is_sleep(&self) -> bool {
        self.kind == BackendKind::Sleep
    }

    fn call(&self, dur: Duration) -> IoCall {
        let micros = dur.as_micros() as u64;
        self.kind
            .timed_call(micros)
            .expect("Io::new admits timed kinds only")
    }

    /// One call, blocking this thread for its whole wait.
    pub fn block(&self, dur: Duration) -> Result<(), CallFailed> {
        if self.is_sleep() {
            std::thread::sleep(dur);
            return Ok(());
        }
        self.backends
            .call_blocking(&self.call(dur))
            .map_err(|e| self.failed(e))
    }

    /// One call, holding no thread while it waits.
    pub async fn wait(&self, dur: Duration) -> Result<(), CallFailed> {
        if self.is_sleep() {
            tokio::time::sleep(dur).await;
            return Ok(());
        }
        self.backends
            .call_async(&self.call(dur))
            .await
            .map_err(|e| self.failed(e))
    }
}
