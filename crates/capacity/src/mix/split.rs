//! A replayed mix's latency split per endpoint at the knee
//! ([`EndpointSplit`]): each endpoint's median at the lowest rate passed
//! and at the lowest rate failed, each the mean over that rate's windows;
//! what each held at once at the capacity, and what it waits on
//! ([`waits_on`]); what bounds the mix, lowest first ([`limits`]), a
//! pool that no endpoint queued on beside it ([`idle_pool`]), and the
//! endpoints using most of the CPU named when the CPU binds first
//! ([`on_cpu`]).

use iolab_model::capacity::{
    EndpointResource, EndpointSplit, EndpointWait, MixCpu, MixLimit, NamedBy, Resource, Search,
    StepRecord,
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
        limits: Vec::new(),
    };
    let named = waits_on(&x, search);
    for (w, on) in x.endpoints.iter_mut().zip(named) {
        w.waits_on = on;
    }
    x.limits = limits(&x, search.mix_cpu.as_ref());
    if let Some(pool) = idle_pool(&x, search) {
        x.limits.push(pool);
        x.limits.sort_by(|a, b| a.bound_rps.total_cmp(&b.bound_rps));
    }
    on_cpu(&mut x, search);
    Some(x)
}

/// `GET /work`.
fn name(method: &str, template: &str) -> String {
    format!("{method} {template}")
}

/// What bounds the mix, lowest first: the CPU (cores / the mix's CPU per
/// request, from the probe), and each resource endpoints were named as
/// waiting on by what they held (its units / the requests of the mix it
/// holds at once a request a second: units / the sum of share x service).
pub fn limits(x: &EndpointSplit, cpu: Option<&MixCpu>) -> Vec<MixLimit> {
    let mut out: Vec<MixLimit> = Vec::new();
    if let Some((c, bound)) = cpu.and_then(|c| c.bound_rps.map(|b| (c, b))) {
        out.push(MixLimit {
            resource: Resource::Cpu,
            size: c.cores,
            name: None,
            endpoints: (c.heaviest().iter())
                .map(|e| name(&e.method, &e.template))
                .collect(),
            bound_rps: bound,
            at_least: false,
        });
    }
    let on: Vec<&EndpointWait> = (x.endpoints.iter())
        .filter(|w| held_on(w).is_some())
        .collect();
    if let Some(r) = on.first().and_then(|w| held_on(w)) {
        let per: f64 = on.iter().map(|w| w.share * w.service_ms / 1000.0).sum();
        if per > 0.0 {
            out.push(MixLimit {
                resource: r.resource,
                size: r.size,
                name: r.name.clone(),
                endpoints: on.iter().map(|w| name(&w.method, &w.template)).collect(),
                bound_rps: r.size.unwrap_or(0.0) / per,
                at_least: false,
            });
        }
    }
    out.sort_by(|a, b| a.bound_rps.total_cmp(&b.bound_rps));
    out
}

/// A pool that did not bind, when no endpoint was named as waiting on one
/// (the CPU bound first, so the endpoints queued alike or not at all): the
/// one downstream the kernel saw connections to at the knee, held by the
/// endpoints that spend their time waiting rather than computing (the
/// probe's service less its CPU, weighted by share: the most first, until
/// nine tenths of the mix's waiting). Its bound counts the connections
/// seen open, so it is a floor (`at_least`), and it is kept only above the
/// capacity found: a pool that bound there would have queued its
/// endpoints. In issue 53's CPU-bound mix, `HEAD /work` (50 ms on a pool
/// of 10) had no limit at all while the CPU held the mix at ~430/s.
pub fn idle_pool(x: &EndpointSplit, search: &Search) -> Option<MixLimit> {
    if x.limits.iter().any(|l| l.resource != Resource::Cpu) {
        return None;
    }
    let capacity = search.capacity_rps?;
    let knee = (search.steps.iter())
        .filter(|s| s.passed && s.rate_rps <= capacity)
        .max_by(|a, b| a.rate_rps.total_cmp(&b.rate_rps))?;
    let [d] = knee.signals.as_ref()?.downstream.as_slice() else {
        return None;
    };
    let cpu = search.mix_cpu.as_ref()?;
    let waiting: Vec<(&EndpointWait, f64)> = (x.endpoints.iter())
        .map(|w| {
            let probed = (cpu.endpoints.iter())
                .find(|e| e.method == w.method && e.template == w.template)?;
            let wait = (w.service_ms - probed.cpu_ms?).max(0.0);
            Some((w, w.share * wait))
        })
        .collect::<Option<_>>()?;
    let total: f64 = waiting.iter().map(|(_, v)| v).sum();
    let mut by = waiting;
    by.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut sum = 0.0;
    let on: Vec<&EndpointWait> = (by.into_iter())
        .take_while(|(_, v)| {
            let before = sum;
            sum += v;
            before < 0.9 * total
        })
        .map(|(w, _)| w)
        .collect();
    let per: f64 = on.iter().map(|w| w.share * w.service_ms / 1000.0).sum();
    let size = d.connections as f64;
    let bound = (per > 0.0 && total > 0.0).then(|| size / per)?;
    (bound > capacity).then(|| MixLimit {
        resource: Resource::Pool,
        size: Some(size),
        name: Some(d.endpoint.clone()),
        endpoints: on.iter().map(|w| name(&w.method, &w.template)).collect(),
        bound_rps: bound,
        at_least: true,
    })
}

/// The resource `w` was named as waiting on by what it held, with a size.
fn held_on(w: &EndpointWait) -> Option<&EndpointResource> {
    (w.waits_on.as_ref()).filter(|r| r.by == NamedBy::Held && r.size.is_some())
}

/// When the CPU binds first, name the endpoints using most of it as
/// waiting on it. It binds when its bound is the lowest limit and the
/// capacity found reached half of it (a CPU a mix did not come near binds
/// nothing), or the fit named the CPU for the whole mix.
fn on_cpu(x: &mut EndpointSplit, search: &Search) {
    let Some(first) = x.limits.first().filter(|l| l.resource == Resource::Cpu) else {
        return;
    };
    let fitted = (search.fit.as_ref()).is_some_and(|f| f.binding.resource == Resource::Cpu);
    let near = search
        .capacity_rps
        .is_some_and(|c| c >= 0.5 * first.bound_rps);
    if !(fitted || near) {
        return;
    }
    let on = EndpointResource {
        resource: Resource::Cpu,
        size: first.size,
        name: None,
        by: NamedBy::Cpu,
    };
    for w in &mut x.endpoints {
        if first.endpoints.contains(&name(&w.method, &w.template)) {
            w.waits_on = Some(on.clone());
        }
    }
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
