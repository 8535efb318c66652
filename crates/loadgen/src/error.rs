//! Why an attack could not start ([`AttackError`]); a leaf every part of
//! the generator may return it from.

/// Why an attack could not start. Failures of requests are never errors.
#[derive(Debug, thiserror::Error)]
pub enum AttackError {
    /// The plan is unusable (bad URL, rate <= 0, empty phases, ...).
    #[error("{0}")]
    Invalid(String),
    /// Setting up failed (name resolution, threads, timers).
    #[error("{0}")]
    Setup(String),
}
