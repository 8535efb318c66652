//! The result of `iolab verify`: one line per contract check.

use serde::{Deserialize, Serialize};

/// One check of the target contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Short name, e.g. `work-sleep-takes-its-time`.
    pub name: String,
    /// Did it pass?
    pub passed: bool,
    /// Why it failed, or what was seen.
    pub detail: String,
}

/// All checks against one target.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyReport {
    /// The URL verified.
    pub target: String,
    /// Checks in the order run.
    pub checks: Vec<Check>,
}

impl VerifyReport {
    /// True when every check passed (and there was at least one).
    pub fn passed(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.passed)
    }
}
