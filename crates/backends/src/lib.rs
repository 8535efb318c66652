//! Backends for io steps: each [`IoCall`] goes to one, through a blocking
//! client (thread models) or a non-blocking one (event-loop models).
//!
//! This is the seam between the models and the outside world: a model decides
//! *where* a call runs (its own thread, an offload pool, a future); this crate
//! decides *what* the call does. `sleep` is embedded and needs nothing; `http`,
//! `pg` and `mc` need an address in [`BackendConfig`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use iolab_model::steps::{BackendKind, IoCall};

/// Where the real backends are and how their pools are sized.
#[derive(Debug, Clone)]
pub struct BackendConfig {
    /// PostgreSQL URL, e.g. `postgres://postgres@127.0.0.1:5432/postgres`.
    pub pg: Option<String>,
    /// PostgreSQL pool size (HikariCP default 10).
    pub pg_pool: u32,
    /// Longest wait for a PostgreSQL connection (HikariCP default 30 s).
    pub pg_wait: Duration,
    /// memcached address, e.g. `127.0.0.1:11211`.
    pub mc: Option<String>,
    /// memcached connections (default 1, the E4 set-up).
    pub mc_pool: u32,
    /// Base URL of iolab's HTTP delay service.
    pub http: Option<String>,
}

impl Default for BackendConfig {
    fn default() -> Self {
        BackendConfig {
            pg: None,
            pg_pool: 10,
            pg_wait: Duration::from_secs(30),
            mc: None,
            mc_pool: 1,
            http: None,
        }
    }
}

/// Why a backend call failed; each maps to the HTTP status a target answers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The step names a backend that has no address configured.
    #[error("backend '{0}' not configured: start the target with {flag} (see `iolab serve --help`)", flag = config_flag(*.0))]
    NotConfigured(BackendKind),
    /// The backend could not be reached or broke the connection.
    #[error("backend '{kind}' unavailable: {detail}")]
    Unavailable {
        /// Which backend.
        kind: BackendKind,
        /// What went wrong.
        detail: String,
    },
    /// No pooled connection could be had within the wait limit.
    #[error("backend '{kind}' pool timeout after {waited_ms} ms")]
    PoolTimeout {
        /// Which backend.
        kind: BackendKind,
        /// How long the call waited.
        waited_ms: u64,
    },
    /// The backend answered, but not what was asked (e.g. a missing key).
    #[error("backend '{kind}': {detail}")]
    Failed {
        /// Which backend.
        kind: BackendKind,
        /// What it answered.
        detail: String,
    },
}

impl BackendError {
    /// The HTTP status a target answers with.
    pub fn status(&self) -> u16 {
        match self {
            BackendError::NotConfigured(_) => 400,
            BackendError::Unavailable { .. } | BackendError::PoolTimeout { .. } => 503,
            BackendError::Failed { .. } => 502,
        }
    }

    /// The error class name used in metrics and results.
    pub fn class(&self) -> &'static str {
        match self {
            BackendError::NotConfigured(_) => "not_configured",
            BackendError::Unavailable { .. } => "backend_unavailable",
            BackendError::PoolTimeout { .. } => "pool_timeout",
            BackendError::Failed { .. } => "backend_failed",
        }
    }
}

/// The `iolab serve` flag that configures a backend.
pub fn config_flag(kind: BackendKind) -> &'static str {
    match kind {
        BackendKind::Sleep => "nothing (sleep is embedded)",
        BackendKind::Http => "--http-backend URL",
        BackendKind::Pg => "--pg URL",
        BackendKind::Mc => "--mc HOST:PORT",
    }
}

/// Every backend a target uses, shared by all its threads (`Arc<Backends>`).
#[derive(Debug)]
pub struct Backends {
    config: BackendConfig,
    calls: [AtomicU64; 4],
}

impl Backends {
    /// Build the clients; real connections are made lazily on first use, so a
    /// target starts even while a backend is down.
    pub fn new(config: BackendConfig) -> Self {
        Backends {
            config,
            calls: Default::default(),
        }
    }

    /// Backends with nothing configured but the embedded timer.
    pub fn sleep_only() -> Self {
        Self::new(BackendConfig::default())
    }

    /// The configuration in use.
    pub fn config(&self) -> &BackendConfig {
        &self.config
    }

    fn count(&self, kind: BackendKind) {
        self.calls[kind as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Calls made so far, by kind (for `/metrics`).
    pub fn calls(&self) -> [(BackendKind, u64); 4] {
        BackendKind::ALL.map(|k| (k, self.calls[k as usize].load(Ordering::Relaxed)))
    }

    /// Make the call on the current thread, blocking it until done.
    pub fn call_blocking(&self, call: &IoCall) -> Result<(), BackendError> {
        self.count(call.kind());
        match call {
            IoCall::Sleep { micros } => {
                std::thread::sleep(Duration::from_micros(*micros));
                Ok(())
            }
            other => Err(BackendError::NotConfigured(other.kind())),
        }
    }

    /// Make the call without blocking a thread.
    pub async fn call_async(&self, call: &IoCall) -> Result<(), BackendError> {
        self.count(call.kind());
        match call {
            IoCall::Sleep { micros } => {
                tokio::time::sleep(Duration::from_micros(*micros)).await;
                Ok(())
            }
            other => Err(BackendError::NotConfigured(other.kind())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unconfigured_backend_is_a_400_that_says_how_to_fix_it() {
        let b = Backends::sleep_only();
        let e = b.call_blocking(&IoCall::Pg { micros: 1 }).unwrap_err();
        assert_eq!(e.status(), 400);
        assert!(e.to_string().contains("--pg"));
        assert_eq!(b.calls()[2], (BackendKind::Pg, 1));
    }

    #[test]
    fn blocking_sleep_takes_its_time() {
        let b = Backends::sleep_only();
        let t = std::time::Instant::now();
        b.call_blocking(&IoCall::Sleep { micros: 20_000 }).unwrap();
        assert!(t.elapsed() >= Duration::from_millis(20));
    }
}
