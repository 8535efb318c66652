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
/// A sweep's size or step outside its bounds (the message speaks of the
/// value only: the caller names the flag).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SweepError {
    /// Fewer clients than the USL's fit needs levels.
    #[error("{0} clients give fewer than {MIN_SWEEP} levels (1..N) for the USL's three parameters: give at least {MIN_SWEEP}, e.g. --sweep 32")]
    TooFew(u32),
    /// More clients than a sweep holds.
    #[error("{} clients: at most {} (the check at twice N holds 2N connections)", thousands(u64::from(*.0)), thousands(u64::from(MAX_SWEEP)))]
    TooMany(u32),
    /// A level's length outside its bounds.
    #[error("{}: give a level's length above 0 and at most {}, e.g. 3s", crate::format_duration(*.0), crate::format_duration(MAX_SWEEP_STEP))]
    Step(Duration),
}

/// `--sweep N`: within [`MIN_SWEEP`]..=[`MAX_SWEEP`] (the message speaks
/// of the value only).
pub fn check_sweep(n: u32) -> Result<(), SweepError> {
    if n < MIN_SWEEP {
        return Err(SweepError::TooFew(n));
    }
    if n > MAX_SWEEP {
        return Err(SweepError::TooMany(n));
    }
    Ok(())
}

/// `--sweep-step D`: above 0, at most [`MAX_SWEEP_STEP`].
pub fn check_sweep_step(d: Duration) -> Result<(), SweepError> {
    if d.is_zero() || d > MAX_SWEEP_STEP {
        return Err(SweepError::Step(d));
    }
    Ok(())
}
