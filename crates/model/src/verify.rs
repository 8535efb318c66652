//! The result of `iolab verify`: one line per contract check, and the
//! `iolab.verify/1` document `iolab verify --json` prints.

use serde::{Deserialize, Serialize};

/// The schema tag of [`VerifyFile`].
pub const VERIFY_SCHEMA: &str = "iolab.verify/1";

/// One check of the target contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Check {
    /// Short name, e.g. `work-sleep-takes-its-time`.
    pub name: String,
    /// Did it pass?
    pub passed: bool,
    /// Why it failed, or what was seen.
    pub detail: String,
}

/// All checks against one target.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifyReport {
    /// The URL verified.
    pub target: String,
    /// The HTTP spoken when not HTTP/1.1: `h2c` (`verify --http2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Checks in the order run.
    pub checks: Vec<Check>,
}

impl VerifyReport {
    /// True when every check passed (and there was at least one).
    pub fn passed(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.passed)
    }
}

/// The `iolab.verify/1` document: the report with its schema tag in front.
/// The report itself stays untagged, as `runs.json` embeds it in each run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifyFile {
    /// Always [`VERIFY_SCHEMA`].
    pub schema: String,
    /// The checks.
    #[serde(flatten)]
    pub report: VerifyReport,
}

impl VerifyFile {
    /// Wrap a report with the schema tag.
    pub fn new(report: VerifyReport) -> Self {
        VerifyFile {
            schema: VERIFY_SCHEMA.to_string(),
            report,
        }
    }
}
