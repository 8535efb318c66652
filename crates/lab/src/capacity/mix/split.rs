//! A replayed mix's latency split per endpoint at the knee
//! ([`EndpointSplit`]): each endpoint's median at the lowest rate passed
//! and at the lowest rate failed, each the mean over that rate's windows.

use iolab_model::capacity::{EndpointSplit, EndpointWait, Search, StepRecord};

/// The split of `search`'s endpoints (`None` without a mix, a pass and a
/// fail).
pub fn split(search: &Search) -> Option<EndpointSplit> {
    let failed_rps = search.failed_rps?;
    let counted = |s: &&StepRecord| !s.generator_saturated && !s.attack.endpoints.is_empty();
    let low_rps = (search.steps.iter().filter(counted))
        .filter(|s| s.passed)
        .map(|s| s.rate_rps)
        .reduce(f64::min)?;
    let at = |rate: f64, passed: bool| -> Vec<&StepRecord> {
        (search.steps.iter().filter(counted))
            .filter(|s| s.rate_rps == rate && s.passed == passed)
            .collect()
    };
    let (low, high) = (at(low_rps, true), at(failed_rps, false));
    let first = high.first()?;
    let median = |steps: &[&StepRecord], method: &str, template: &str| -> Option<f64> {
        let v: Vec<f64> = (steps.iter().flat_map(|s| &s.attack.endpoints))
            .filter(|e| e.method == method && e.template == template && e.ok + e.non_2xx > 0)
            .map(|e| e.latency_ms.p50)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let endpoints: Vec<EndpointWait> = (first.attack.endpoints.iter())
        .filter_map(|e| {
            let service = median(&low, &e.method, &e.template)?;
            let loaded = median(&high, &e.method, &e.template)?;
            Some(EndpointWait {
                method: e.method.clone(),
                template: e.template.clone(),
                service_ms: service,
                queued_ms: (loaded - service).max(0.0),
            })
        })
        .collect();
    (endpoints.len() > 1).then(|| EndpointSplit {
        low_rps,
        failed_rps,
        shared: EndpointSplit::shared(&endpoints),
        endpoints,
    })
}
