//! Verified counterfactuals: the `iolab.whatif/1` document `iolab whatif`
//! prints with `--json` and saves as `whatif.json`. For each pair, service
//! A searched as a black box (its fit names the binding resource), what the
//! fitted network predicts for each change B, and B measured: predicted
//! against measured capacity under the same objective.

use serde::{Deserialize, Serialize};

use crate::capacity::{Resource, Search, Slo, WhatIf};

/// The schema tag of [`WhatIfFile`].
pub const WHATIF_SCHEMA: &str = "iolab.whatif/1";

/// One change made and measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Counterfactual {
    /// B's name (its label in the preset).
    pub name: String,
    /// The change, as its runtime serves it (model and knobs, the
    /// runtime's defaults filled in).
    pub change: String,
    /// The fitted network with that change, simulated.
    pub predicted: WhatIf,
    /// B's own capacity search.
    pub measured: Search,
    /// (predicted - measured) / measured capacity, %; `None` when either
    /// is missing.
    pub error_pct: Option<f64>,
}

/// A service, fitted, and the changes made to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Pair {
    /// The preset's name.
    pub name: String,
    /// The preset's description.
    pub description: String,
    /// The objective of every search of the pair.
    pub slo: Slo,
    /// A, searched as a black box; its fit names the binding resource.
    pub fitted: Search,
    /// The resource A's configuration sets, when the preset says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Resource>,
    /// The fit named `expected`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub named_right: Option<bool>,
    /// Each change B: predicted, then measured.
    pub changes: Vec<Counterfactual>,
}

/// The `iolab.whatif/1` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WhatIfFile {
    /// Always [`WHATIF_SCHEMA`].
    pub schema: String,
    /// The time-scale every pair ran at (1: as written).
    pub scale: f64,
    /// One entry per preset.
    pub pairs: Vec<Pair>,
    /// Start, RFC 3339 UTC.
    pub started_utc: String,
}

impl Counterfactual {
    /// (predicted - measured) / measured, %.
    pub fn error(predicted: Option<f64>, measured: Option<f64>) -> Option<f64> {
        let (p, m) = (predicted?, measured?);
        (m > 0.0).then(|| (p - m) / m * 100.0)
    }
}
