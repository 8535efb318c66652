//! A replayed mix of endpoints (`iolab attack --replay`): which endpoint
//! each request of a plan's list belongs to ([`ReplayMix`], in the plan) and
//! what each endpoint got ([`EndpointResult`], the optional `endpoints`
//! section of `iolab.attack/1`). Counts and histograms only, so shards'
//! sections add up exactly as the rest of the document does.

use serde::{Deserialize, Serialize};

use crate::attack::{ErrorCounts, LatencySummary};

/// One endpoint of a recorded mix: a method and a route template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndpointKey {
    /// HTTP method, e.g. `GET`.
    pub method: String,
    /// Route template, e.g. `/api/orders/{id}` (ids made `{id}`).
    pub template: String,
    /// Its share of the recorded traffic, 0..=1 (requests skipped by the
    /// replay's safety rules not counted).
    pub share: f64,
    /// Requests of it in the recording.
    pub recorded: u64,
    /// Mean service time the recording gives for it (an access log's
    /// `$request_time`, a HAR's `timings.wait`, else its `time`), ms;
    /// absent when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_service_ms: Option<f64>,
}

/// Plans compare equal only when their shares are the very same numbers
/// (never NaN: a share is a count over a total).
impl Eq for EndpointKey {}

/// The endpoints of a replayed mix and, per request of the plan's list,
/// the index of its endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplayMix {
    /// The endpoints, most requests first.
    pub endpoints: Vec<EndpointKey>,
    /// `of_request[i]`: the endpoint of the list's request `i`.
    pub of_request: Vec<u32>,
}

impl ReplayMix {
    /// The endpoint of request `i` of the list (0 when out of range).
    pub fn endpoint_of(&self, i: usize) -> usize {
        self.of_request.get(i).map_or(0, |e| *e as usize)
    }

    /// Every request names an endpoint that exists; the error says which.
    pub fn check(&self, requests: usize) -> Result<(), String> {
        if self.of_request.len() != requests {
            return Err(format!(
                "replay mix names {} requests, the list has {requests}",
                self.of_request.len()
            ));
        }
        match self
            .of_request
            .iter()
            .find(|e| **e as usize >= self.endpoints.len())
        {
            Some(e) => Err(format!(
                "replay mix names endpoint {e}, it has {}",
                self.endpoints.len()
            )),
            None => Ok(()),
        }
    }
}

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
    pub fn check_accounting(&self) -> Result<(), String> {
        let answered = self
            .ok
            .saturating_add(self.non_2xx)
            .saturating_add(self.errors.total());
        match answered == self.sent {
            true => Ok(()),
            false => Err(format!(
                "endpoint {} {}: sent {} != ok + non_2xx + errors {answered}",
                self.method, self.template, self.sent
            )),
        }
    }
}
