//! Where a replayed mix's endpoints waited at the capacity search's knee
//! ([`EndpointSplit`]): each endpoint's median at the lowest rate passed
//! (its service) and at the lowest rate failed (service and queueing).
//! Endpoints that queued alike wait in one queue, so the resource the fit
//! names binds each of them; one that queued alone waits on a resource of
//! its own. The CPU of a constant mix cannot be split per endpoint (every
//! step has the same shares), so this is latency evidence only.

use serde::{Deserialize, Serialize};

/// One endpoint's latency split at the knee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndpointWait {
    /// HTTP method.
    pub method: String,
    /// Route template.
    pub template: String,
    /// Its median at the lowest rate passed, ms (its service time).
    pub service_ms: f64,
    /// Its median at the lowest rate failed less its service time, ms
    /// (at least 0).
    pub queued_ms: f64,
}

/// The endpoints' latency split at the knee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndpointSplit {
    /// The lowest rate passed, req/s (the whole mix's).
    pub low_rps: f64,
    /// The lowest rate failed, req/s.
    pub failed_rps: f64,
    /// Each endpoint's, in the mix's order.
    pub endpoints: Vec<EndpointWait>,
    /// Every endpoint queued at least half as long as the longest:
    /// one queue, one binding resource for all.
    pub shared: bool,
}

impl EndpointSplit {
    /// Whether the waits are one queue's: the shortest at least half the
    /// longest.
    pub fn shared(waits: &[EndpointWait]) -> bool {
        let q = waits.iter().map(|w| w.queued_ms);
        let (lo, hi) = (
            q.clone().fold(f64::INFINITY, f64::min),
            q.fold(0.0, f64::max),
        );
        hi > 0.0 && lo * 2.0 >= hi
    }
}
