//! A replayed mix of endpoints (`iolab attack --replay`): which endpoint
//! each request of a plan's list belongs to ([`ReplayMix`], in the plan) and
//! what each endpoint got (`crate::attack::EndpointResult`, the optional
//! `endpoints` section of `iolab.attack/1`).

use serde::{Deserialize, Serialize};

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

/// A replay mix that does not fit its request list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MixError {
    /// Another number of requests.
    #[error("replay mix names {named} requests, the list has {has}")]
    Requests {
        /// Requests the mix names.
        named: usize,
        /// Requests the list has.
        has: usize,
    },
    /// An endpoint past its list.
    #[error("replay mix names endpoint {named}, it has {has}")]
    Endpoint {
        /// The endpoint named.
        named: u64,
        /// Endpoints it has.
        has: usize,
    },
}

impl ReplayMix {
    /// The endpoint of request `i` of the list (0 when out of range).
    pub fn endpoint_of(&self, i: usize) -> usize {
        self.of_request.get(i).map_or(0, |e| *e as usize)
    }

    /// Every request names an endpoint that exists; the error says which.
    pub fn check(&self, requests: usize) -> Result<(), MixError> {
        if self.of_request.len() != requests {
            return Err(MixError::Requests {
                named: self.of_request.len(),
                has: requests,
            });
        }
        match self
            .of_request
            .iter()
            .find(|e| **e as usize >= self.endpoints.len())
        {
            Some(e) => Err(MixError::Endpoint {
                named: u64::from(*e),
                has: self.endpoints.len(),
            }),
            None => Ok(()),
        }
    }
}
