//! What one endpoint of a replayed mix got in a run ([`EndpointResult`]):
//! the optional `endpoints` section of `iolab.attack/1`. Counts and
//! histograms only, so shards' sections add up exactly as the rest of the
//! document does.

use serde::{Deserialize, Serialize};

use super::{ErrorCounts, LatencySummary};

/// What one endpoint of a replayed mix got in a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndpointResult {
    /// HTTP method.
    pub method: String,
    /// Route template.
    pub template: String,
    /// Its share of the recorded traffic, 0..=1.
    pub share: f64,
    /// Requests of it put on the wire.
    pub sent: u64,
    /// Answered 2xx within the timeout.
    pub ok: u64,
    /// Answered with another status within the timeout.
    pub non_2xx: u64,
    /// Failures by class.
    pub errors: ErrorCounts,
    /// Latency from the intended send time over its answers, ms.
    pub latency_ms: LatencySummary,
    /// Base64 of its latency HdrHistogram (V2 + deflate, microseconds), so
    /// shards' endpoints merge exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
    /// Mean service time the recording gives for it, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_service_ms: Option<f64>,
}

impl EndpointResult {
    /// `sent = ok + non_2xx + errors`, as for the whole run.
    pub fn check_accounting(&self) -> Result<(), super::AccountingError> {
        let answered = self
            .ok
            .saturating_add(self.non_2xx)
            .saturating_add(self.errors.total());
        match answered == self.sent {
            true => Ok(()),
            false => Err(super::AccountingError::Endpoint {
                method: self.method.clone(),
                template: self.template.clone(),
                sent: self.sent,
                answered,
            }),
        }
    }
}
