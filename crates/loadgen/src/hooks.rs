//! Ways for a caller to watch or stop a running attack: a cancel flag, a
//! progress callback, the live feed.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The live snapshot handed to [`Hooks::progress`] (a model type, so that
/// `iolab-report` can render it as the progress line).
pub use iolab_model::attack::Progress;

use crate::live::LiveFeed;

/// A progress callback.
pub type ProgressFn = dyn Fn(&Progress) + Send + Sync;

/// Ways for a caller to watch or stop a running attack.
#[derive(Clone, Default)]
pub struct Hooks {
    /// Once set: stop sending, let in-flight requests finish (or time out),
    /// and return the partial result with `cancelled = true`.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Called from the calling thread about every 250 ms while the attack runs.
    pub progress: Option<Arc<ProgressFn>>,
    /// `--live`: the attack's books as each series interval closes, for a
    /// live page or `/metrics`; the final document once it ends.
    pub live: Option<Arc<LiveFeed>>,
}
