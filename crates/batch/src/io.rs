//! Where an IO task's wait goes: the embedded timer (the default, as in E1
//! and E3) or one real call to a backend (`http` delay service, `pg_sleep` on
//! PostgreSQL), through the blocking client on thread executors and the
//! non-blocking one on event loops, so a batch can show what a real
//! connection pool changes (ten PostgreSQL connections cap every executor).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use iolab_backends::Backends;
use iolab_model::steps::{BackendKind, IoCall};

/// An IO task's backend and the clients to reach it.
#[derive(Debug, Clone)]
pub struct Io {
    kind: BackendKind,
    backends: Arc<Backends>,
    /// The first failed call of this batch, for its `failure` line.
    first_error: Arc<OnceLock<String>>,
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
    pub fn new(kind: BackendKind, backends: Arc<Backends>) -> Result<Self, String> {
        if !kind.is_timed() {
            let timed: Vec<&str> = BackendKind::timed().map(BackendKind::as_str).collect();
            return Err(format!(
                "io = {kind}: a batch IO task is a timed call; use {}",
                timed.join(", ")
            ));
        }
        if !kind.is_sleep() && backends.config().address(kind).is_none() {
            return Err(format!(
                "io = {kind}: no address for it; give {} (or set {})",
                iolab_backends::config_flag(kind),
                kind.def().env
            ));
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
    pub fn first_error(&self) -> Option<&str> {
        self.first_error.get().map(String::as_str)
    }

    fn failed(&self, e: impl std::fmt::Display) -> String {
        let msg = format!("{} call failed: {e}", self.kind);
        let _ = self.first_error.set(msg.clone());
        msg
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
    pub fn block(&self, dur: Duration) -> Result<(), String> {
        if self.is_sleep() {
            std::thread::sleep(dur);
            return Ok(());
        }
        self.backends
            .call_blocking(&self.call(dur))
            .map_err(|e| self.failed(e))
    }

    /// One call, holding no thread while it waits.
    pub async fn wait(&self, dur: Duration) -> Result<(), String> {
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
