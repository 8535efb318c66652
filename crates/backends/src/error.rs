//! [`BackendError`]: why a call failed, and the status and class it maps to.

use iolab_model::steps::BackendKind;

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

    /// Index of the class in [`ERROR_CLASSES`] (for counters).
    pub(crate) fn class_index(&self) -> usize {
        match self {
            BackendError::NotConfigured(_) => 0,
            BackendError::Unavailable { .. } => 1,
            BackendError::PoolTimeout { .. } => 2,
            BackendError::Failed { .. } => 3,
        }
    }

    pub(crate) fn unavailable(kind: BackendKind, detail: impl std::fmt::Display) -> Self {
        BackendError::Unavailable {
            kind,
            detail: detail.to_string(),
        }
    }

    pub(crate) fn failed(kind: BackendKind, detail: impl std::fmt::Display) -> Self {
        BackendError::Failed {
            kind,
            detail: detail.to_string(),
        }
    }

    pub(crate) fn pool_timeout(kind: BackendKind, waited: std::time::Duration) -> Self {
        BackendError::PoolTimeout {
            kind,
            waited_ms: waited.as_millis() as u64,
        }
    }
}

/// Every error class, in the order of [`crate::Backends::errors`].
pub const ERROR_CLASSES: [&str; 4] = [
    "not_configured",
    "backend_unavailable",
    "pool_timeout",
    "backend_failed",
];

/// The `iolab serve` flag that configures a backend, with what it takes.
pub fn config_flag(kind: BackendKind) -> String {
    let def = kind.def();
    if def.flag.is_empty() {
        return "nothing (sleep is embedded)".into();
    }
    format!("{} {}", def.flag, def.value_name)
}
