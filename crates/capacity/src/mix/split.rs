//! A replayed mix's latency split per endpoint at the knee
//! ([`EndpointSplit`]): each endpoint's median at the lowest rate passed
//! and at the lowest rate failed, each the mean over that rate's windows;
//! what each held at once at the capacity, and what it waits on
//! ([`waits_on`]).

use iolab_model::capacity::{
    EndpointResource, EndpointSplit, EndpointWait, NamedBy, Resource, Search, StepRecord,
};

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
    let sent: u64 = first.attack.endpoints.iter().map(|e| e.sent).sum();
    let endpoints: Vec<EndpointWait> = (first.attack.endpoints.iter())
        .filter_map(|e| {
            let service = median(&low, &e.method, &e.template)?;
            let loaded = median(&high, &e.method, &e.template)?;
            let share = match sent {
                0 => e.share,
                n => e.sent as f64 / n as f64,
            };
            Some(EndpointWait {
                method: e.method.clone(),
                template: e.template.clone(),
                service_ms: service,
                queued_ms: (loaded - service).max(0.0),
                share,
                held: search.capacity_rps.map(|c| c * share * service / 1000.0),
                waits_on: None,
            })
        })
        .collect();
    if endpoints.len() < 2 {
        return None;
    }
    let mut x = EndpointSplit {
        low_rps,
        failed_rps,
        shared: EndpointSplit::shared(&endpoints),
        endpoints,
    };
    let named = waits_on(&x, search);
    for (w, on) in x.endpoints.iter_mut().zip(named) {
        w.waits_on = on;
    }
    Some(x)
}

/// What each endpoint of `x` waits on. One queue: the resource the fit
/// named, for each. Otherwise, for the endpoints that queued, a resource
/// whose units match the requests they held at once together (within a
/// quarter, or one): the connections to one downstream at the knee (a pool
/// of 10 to PostgreSQL held by the one endpoint that queries it), else the
/// resource the fit named when its size matches. The endpoints that did not
/// queue wait on nothing at that rate.
fn waits_on(x: &EndpointSplit, search: &Search) -> Vec<Option<EndpointResource>> {
    let fitted = search.fit.as_ref().map(|f| &f.binding);
    if x.shared {
        let on = fitted
            .filter(|b| b.resource != Resource::Unknown)
            .map(|b| EndpointResource {
                resource: b.resource,
                size: b.size,
                name: b.name.clone(),
                by: NamedBy::OneQueue,
            });
        return vec![on; x.endpoints.len()];
    }
    let queued: Vec<bool> = x.endpoints.iter().map(|w| x.queued(w)).collect();
    let held: Option<f64> = (x.endpoints.iter().zip(&queued))
        .filter(|(_, q)| **q)
        .map(|(w, _)| w.held)
        .sum();
    let matches = |units: f64| held.is_some_and(|h| (h - units).abs() <= (0.25 * units).max(1.0));
    let knee = (search.steps.iter())
        .filter(|s| s.passed && search.capacity_rps.is_some_and(|c| s.rate_rps <= c))
        .max_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps));
    let downstream = (knee.and_then(|s| s.signals.as_ref()))
        .into_iter()
        .flat_map(|s| &s.downstream)
        .find(|d| matches(d.connections as f64))
        .map(|d| EndpointResource {
            resource: Resource::Pool,
            size: Some(d.connections as f64),
            name: Some(d.endpoint.clone()),
            by: NamedBy::Held,
        });
    let on = downstream.or_else(|| {
        fitted
            .filter(|b| b.resource != Resource::Unknown && b.size.is_some_and(matches))
            .map(|b| EndpointResource {
                resource: b.resource,
                size: b.size,
                name: b.name.clone(),
                by: NamedBy::Held,
            })
    });
    queued
        .into_iter()
        .map(|q| if q { on.clone() } else { None })
        .collect()
}
