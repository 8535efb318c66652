//! A USL sweep's bounds (`iolab capacity --sweep N --sweep-step D`).

use std::time::Duration;

use super::thousands;

/// Fewest clients a USL sweep reaches (`--sweep N`): levels 1..N, at
/// least six of them, the fewest usl4j fits its three parameters to (and
/// three degrees of freedom left for their intervals).
pub const MIN_SWEEP: u32 = 6;
/// Most clients a USL sweep reaches: its check at twice N holds 2N
/// connections, the default connection cap.
pub const MAX_SWEEP: u32 = 5_000;
/// Longest level of a sweep (`--sweep-step`).
pub const MAX_SWEEP_STEP: Duration = Duration::from_secs(600);
/// `--sweep N`: within [`MIN_SWEEP`]..=[`MAX_SWEEP`] (the message speaks
/// of the value only).
pub fn check_sweep(n: u32) -> Result<(), String> {
    if n < MIN_SWEEP {
        return Err(format!(
            "{n} clients give fewer than {MIN_SWEEP} levels (1..N) for the USL's three parameters: give at least {MIN_SWEEP}, e.g. --sweep 32"
        ));
    }
    if n > MAX_SWEEP {
        return Err(format!(
            "{} clients: at most {} (the check at twice N holds 2N connections)",
            thousands(u64::from(n)),
            thousands(u64::from(MAX_SWEEP))
        ));
    }
    Ok(())
}

/// `--sweep-step D`: above 0, at most [`MAX_SWEEP_STEP`].
pub fn check_sweep_step(d: Duration) -> Result<(), String> {
    if d.is_zero() || d > MAX_SWEEP_STEP {
        return Err(format!(
            "{}: give a level's length above 0 and at most {}, e.g. 3s",
            crate::format_duration(d),
            crate::format_duration(MAX_SWEEP_STEP)
        ));
    }
    Ok(())
}
