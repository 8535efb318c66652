//! Where a replayed mix's endpoints waited at the capacity search's knee
//! ([`EndpointSplit`]): each endpoint's median at the lowest rate passed
//! (its service) and at the lowest rate failed (service and queueing).
//! Endpoints that queued alike wait in one queue, so the resource the fit
//! names binds each of them; those that queued alone wait on a resource of
//! their own, named when the requests they held at once at the capacity
//! (Little's law, per endpoint) match one the signals show: the
//! connections to a downstream, or the size of the resource the fit named
//! ([`EndpointResource`]). The CPU of a constant mix cannot be split per
//! endpoint (every step has the same shares): the unloaded probe before
//! the search reads each endpoint's ([`super::MixCpu`]), and when the CPU's
//! bound is the lowest of the mix's [`MixLimit`]s the endpoints using most
//! of it are named as waiting on it.

use serde::{Deserialize, Serialize};

use super::{MixLimit, Resource};

/// How an endpoint's resource was named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NamedBy {
    /// Every endpoint queued alike: the fit's binding resource binds each.
    OneQueue,
    /// The endpoints that queued held, at the capacity, as many requests at
    /// once as the resource has units (within a quarter).
    Held,
    /// The probe's CPU per request: it uses the most of the CPU, whose
    /// bound on the mix is the lowest of its limits.
    Cpu,
}

/// What an endpoint waits on at the knee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndpointResource {
    /// What it is.
    pub resource: Resource,
    /// How many units it has (connections, threads), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<f64>,
    /// The downstream's or the pool's name (`127.0.0.1:5432`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// How it was named.
    pub by: NamedBy,
}

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
    /// Its share of the requests at the knee, 0..=1.
    #[serde(default)]
    pub share: f64,
    /// Its requests held at once at the capacity: capacity x share x
    /// service time (Little's law); `None` without a capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<f64>,
    /// What it waits on, when the evidence names it (`None`: it did not
    /// queue, or nothing in sight has the size of what it held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits_on: Option<EndpointResource>,
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
    /// What bounds the mix, lowest first (it binds first): the CPU from
    /// the probe, the pool an endpoint waits on; empty when neither is
    /// known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<MixLimit>,
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

    /// Whether `w` queued with the longest: at least half its wait.
    pub fn queued(&self, w: &EndpointWait) -> bool {
        let hi = (self.endpoints.iter())
            .map(|w| w.queued_ms)
            .fold(0.0, f64::max);
        hi > 0.0 && w.queued_ms * 2.0 >= hi
    }
}
