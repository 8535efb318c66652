//! Ctrl-C (SIGINT) and SIGTERM become a cancel flag: the runner stops the
//! current run, stops its targets and writes what it measured. A second
//! Ctrl-C exits at once with 130 (children die with us: PR_SET_PDEATHSIG).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

/// Exit code of a run stopped by Ctrl-C (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Install the handlers and return the flag they set.
pub fn cancel_on_signals() -> std::io::Result<Arc<AtomicBool>> {
    let cancel = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // Order matters: the conditional exit sees the flag set by an earlier signal.
        flag::register_conditional_shutdown(sig, i32::from(EXIT_INTERRUPTED), Arc::clone(&cancel))?;
        flag::register(sig, Arc::clone(&cancel))?;
    }
    Ok(cancel)
}
