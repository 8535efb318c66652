//! A replayed mix's CPU per endpoint and what bounds the mix: a constant
//! mix cannot split the target's CPU by endpoint (every step has the same
//! shares), so before the search each endpoint is sent alone, one request
//! at a time, and the target's CPU time read from `/proc` ([`MixCpu`]).
//! From it the CPU's bound on the mix (cores / the share-weighted CPU per
//! request) and each endpoint's part of it; beside the pool an endpoint
//! waits on, each a [`MixLimit`]: the lowest binds first. A change's
//! what-if for the mix is the lowest of its limits after the change
//! ([`MixWhatIf`]): a bigger pool lifts the pool's endpoint only as far as
//! the CPU lets the mix go.

use serde::{Deserialize, Serialize};

use super::Resource;

/// One endpoint's CPU per request, from the unloaded probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndpointCpu {
    /// HTTP method.
    pub method: String,
    /// Route template.
    pub template: String,
    /// Its share of the recorded mix, 0..=1.
    pub share: f64,
    /// The target's CPU per answered request, ms, less what it burnt idle
    /// (`None`: not measured, `missing` says why; never 0 for unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ms: Option<f64>,
    /// Its median latency alone, one request at a time, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_ms: Option<f64>,
    /// Requests the probe had answered (the figure is from these).
    pub requests: u64,
    /// How long it was probed, s.
    pub seconds: f64,
    /// Its part of the mix's CPU: share x CPU / the mix's CPU per request
    /// (`None` when it or the mix's is not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    /// Why `cpu_ms` is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// The mix's CPU, endpoint by endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MixCpu {
    /// Each endpoint's, in the mix's order.
    pub endpoints: Vec<EndpointCpu>,
    /// CPU the target burnt with no load, cores (subtracted from each
    /// endpoint's reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_cores: Option<f64>,
    /// Cores the target may run on (its allowed CPUs, at most the host's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<f64>,
    /// Over the probe, the share of the time the target's threads wanted
    /// a CPU that they had one (run time over run time plus run-queue
    /// wait): on a shared machine it gets its cores only that share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub got: Option<f64>,
    /// The same share at the search's knee (its threads' CPU time over
    /// that plus their run-queue wait, at the highest rate held): what it
    /// got when it mattered, which the bound counts when read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub got_at_knee: Option<f64>,
    /// The mix's CPU per request: the sum of share x CPU, ms (`None`
    /// unless every endpoint was measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_request_ms: Option<f64>,
    /// The rate the CPU alone allows the mix: the cores it gets (cores x
    /// `got_at_knee`, else `got`, all of them when neither was read) / CPU
    /// per request, req/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_rps: Option<f64>,
    /// Why nothing was measured (no PID, the probe refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

impl MixCpu {
    /// Nothing measured, and why.
    pub fn missing(why: impl Into<String>) -> MixCpu {
        MixCpu {
            endpoints: Vec::new(),
            idle_cores: None,
            cores: None,
            got: None,
            got_at_knee: None,
            per_request_ms: None,
            bound_rps: None,
            missing: Some(why.into()),
        }
    }

    /// From each endpoint's reading on `cores`, of which the target got
    /// `got`: the mix's CPU per request (only when every endpoint has
    /// one), its bound and each endpoint's fraction.
    pub fn of(
        mut endpoints: Vec<EndpointCpu>,
        idle_cores: Option<f64>,
        cores: f64,
        got: Option<f64>,
    ) -> MixCpu {
        let per: Option<f64> = (endpoints.iter())
            .map(|e| e.cpu_ms.map(|c| c * e.share))
            .sum();
        let per = per.filter(|p| *p > 0.0 && !endpoints.is_empty());
        for e in &mut endpoints {
            e.fraction = per.zip(e.cpu_ms).map(|(p, c)| c * e.share / p);
        }
        MixCpu {
            endpoints,
            idle_cores,
            cores: Some(cores),
            got,
            got_at_knee: None,
            per_request_ms: per,
            bound_rps: per.map(|p| cores * got.unwrap_or(1.0) * 1000.0 / p),
            missing: None,
        }
    }

    /// The same, with the share of its cores it got at the knee (`got`):
    /// the bound counts that one.
    pub fn at_knee(mut self, got: Option<f64>) -> MixCpu {
        self.got_at_knee = got;
        let share = got.or(self.got).unwrap_or(1.0);
        self.bound_rps = (self.per_request_ms.zip(self.cores)).map(|(p, c)| c * share * 1000.0 / p);
        self
    }

    /// The endpoints that use most of the CPU: the largest parts, in
    /// order, until they make up half of it.
    pub fn heaviest(&self) -> Vec<&EndpointCpu> {
        let mut by: Vec<&EndpointCpu> = (self.endpoints.iter())
            .filter(|e| e.fraction.is_some())
            .collect();
        let part = |e: &&EndpointCpu| e.fraction.unwrap_or(0.0);
        by.sort_by(|a, b| part(b).total_cmp(&part(a)));
        let mut sum = 0.0;
        by.into_iter()
            .take_while(|e| {
                let before = sum;
                sum += e.fraction.unwrap_or(0.0);
                before < 0.5
            })
            .collect()
    }
}

/// A resource that bounds the mix, and at what rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MixLimit {
    /// What it is.
    pub resource: Resource,
    /// Its units (cores, connections), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<f64>,
    /// The pool's downstream, when named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The endpoints that use it (`METHOD /template`), most first.
    pub endpoints: Vec<String>,
    /// The mix's rate at which it is all used, req/s.
    pub bound_rps: f64,
    /// The bound is a floor: the pool was named from the connections seen
    /// open while its endpoints did not queue on it, and a pool that opens
    /// connections as asked may have more.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_least: bool,
}

/// What a change buys the mix: the lowest of its limits after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MixWhatIf {
    /// The change, as the what-if names it (`a pool of 20`).
    pub change: String,
    /// The fitted service after the change, simulated as one request of
    /// the mix's mean work, req/s.
    pub simulated_rps: f64,
    /// The CPU's bound on the mix after the change (more cores raise it),
    /// req/s.
    pub cpu_rps: f64,
    /// The mix's: the lower of the two, req/s.
    pub capacity_rps: f64,
    /// The CPU caps it (its bound is the lower).
    pub cpu_caps: bool,
}
