//! What bounds a mix: the CPU from the probe beside the pool an endpoint
//! was named on, the lowest first; the endpoints using most of the CPU
//! named when it binds; each what-if capped by the CPU.

use iolab_model::capacity::{Downstream, EndpointCpu, MixCpu, NamedBy, Resource, Search, Signals};

use super::super::cpu::per_request_ms;
use super::*;

/// /search (20%) and /orders (80%, 50 ms on a pool of 4 connections to
/// PostgreSQL): capacity 100/s, failed at 110/s.
fn pooled() -> Search {
    let o = objective();
    let at = |rate: f64, passed: bool, (s, r): (f64, f64)| {
        let mut st = step(&o, rate, 0, 0);
        st.passed = passed;
        st.attack.endpoints[0].latency_ms.p50 = s;
        st.attack.endpoints[1].latency_ms.p50 = r;
        st.signals = Some(Signals {
            downstream: vec![Downstream {
                endpoint: "127.0.0.1:5432".into(),
                connections: 4,
            }],
            ..Signals::default()
        });
        st
    };
    Search {
        capacity_rps: Some(100.0),
        failed_rps: Some(110.0),
        steps: vec![at(100.0, true, (7.0, 50.0)), at(110.0, false, (7.5, 350.0))],
        ..empty_search()
    }
}

fn probed(template: &str, share: f64, cpu_ms: Option<f64>) -> EndpointCpu {
    EndpointCpu {
        method: "GET".into(),
        template: template.into(),
        share,
        cpu_ms,
        service_ms: None,
        requests: 300,
        seconds: 1.0,
        fraction: None,
        missing: cpu_ms
            .is_none()
            .then(|| "none of its 3 requests answered".into()),
    }
}

/// On one core: /search `search_ms` of CPU a request, /orders 0.5 ms.
fn cpu(search_ms: f64) -> MixCpu {
    MixCpu::of(
        vec![
            probed("/search", 0.2, Some(search_ms)),
            probed("/orders", 0.8, Some(0.5)),
        ],
        Some(0.01),
        1.0,
        None,
    )
}

#[test]
fn the_mixs_cpu_bound_is_the_cores_over_the_share_weighted_cpu() {
    // 20% x 7 ms + 80% x 0.5 ms = 1.8 ms a request: 1 core serves 555.6/s.
    let c = cpu(7.0);
    assert!((c.per_request_ms.unwrap() - 1.8).abs() < 1e-9);
    assert!((c.bound_rps.unwrap() - 555.555).abs() < 0.01);
    let f = c.endpoints[0].fraction.unwrap();
    assert!((f - 1.4 / 1.8).abs() < 1e-9, "{f}");
    // /search uses 78% of it: it alone is more than half.
    let heavy: Vec<&str> = c.heaviest().iter().map(|e| e.template.as_str()).collect();
    assert_eq!(heavy, ["/search"]);
    // A target that had its core 80% of the time it wanted it: 444.4/s.
    let shared = MixCpu::of(cpu(7.0).endpoints, None, 1.0, Some(0.8));
    assert!((shared.bound_rps.unwrap() - 444.444).abs() < 0.01);
    // At the knee it had its core half the time: the bound counts that.
    let knee = shared.at_knee(Some(0.5));
    assert!((knee.bound_rps.unwrap() - 277.777).abs() < 0.01);
    assert_eq!((knee.got, knee.got_at_knee), (Some(0.8), Some(0.5)));
    // An endpoint not measured leaves the mix's CPU unknown, not smaller.
    let gap = MixCpu::of(
        vec![
            probed("/search", 0.2, Some(7.0)),
            probed("/orders", 0.8, None),
        ],
        Some(0.0),
        1.0,
        None,
    );
    assert_eq!((gap.per_request_ms, gap.bound_rps), (None, None));
    assert_eq!(gap.endpoints[0].fraction, None);
    // 0.3 s of CPU over 1 s with 0.05 cores idle, 250 answered: 1 ms each.
    assert!((per_request_ms(0.3, 0.05, 1.0, 250) - 1.0).abs() < 1e-9);
    assert_eq!(per_request_ms(0.01, 0.05, 1.0, 250), 0.0);
}

#[test]
fn the_pool_binds_first_and_the_cpu_would_at_its_own_bound() {
    let mut search = pooled();
    finish(&mut search, cpu(7.0));
    let x = search.endpoint_split.as_ref().unwrap();
    // The pool: 4 connections / (80% x 50 ms) = 100/s; the CPU 555.6/s.
    let bounds: Vec<(Resource, f64)> = (x.limits.iter())
        .map(|l| (l.resource, (l.bound_rps * 10.0).round() / 10.0))
        .collect();
    assert_eq!(bounds, [(Resource::Pool, 100.0), (Resource::Cpu, 555.6)]);
    assert_eq!(x.limits[0].endpoints, ["GET /orders"]);
    assert_eq!(x.limits[1].endpoints, ["GET /search"]);
    // The CPU does not bind: /search waits on nothing, /orders on the pool.
    assert_eq!(x.endpoints[0].waits_on, None);
    assert_eq!(x.endpoints[1].waits_on.as_ref().unwrap().by, NamedBy::Held);
}

#[test]
fn when_the_cpu_binds_first_the_endpoint_using_most_of_it_is_named() {
    let mut search = pooled();
    // 20% x 60 ms + 80% x 0.5 ms = 12.4 ms: 80.6/s, under the pool's 100.
    finish(&mut search, cpu(60.0));
    let x = search.endpoint_split.as_ref().unwrap();
    assert_eq!(x.limits[0].resource, Resource::Cpu);
    assert!((x.limits[0].bound_rps - 1000.0 / 12.4).abs() < 1e-6);
    let on = x.endpoints[0].waits_on.as_ref().expect("/search named");
    assert_eq!(
        (on.resource, on.size, on.by),
        (Resource::Cpu, Some(1.0), NamedBy::Cpu)
    );
    // /orders keeps its pool, which would bind at 100/s.
    assert_eq!(
        x.endpoints[1].waits_on.as_ref().unwrap().resource,
        Resource::Pool
    );
    // A CPU the mix came nowhere near (capacity under half its bound) binds nothing.
    let mut far = pooled();
    far.capacity_rps = Some(30.0);
    finish(&mut far, cpu(60.0));
    let x = far.endpoint_split.as_ref().unwrap();
    assert_eq!(x.limits[0].resource, Resource::Cpu);
    assert!(x.endpoints[0].waits_on.is_none());
}

#[test]
fn a_changes_answer_for_the_mix_is_the_lower_of_the_service_and_the_cpu() {
    let w = capped("a pool of 20", 1400.0, 1100.0);
    assert_eq!((w.capacity_rps, w.cpu_caps), (1100.0, true));
    let w = capped("a pool of 20", 1400.0, 2000.0);
    assert_eq!((w.capacity_rps, w.cpu_caps), (1400.0, false));
    // Without a fit there is no what-if to cap; without a PID no bound.
    let mut search = pooled();
    finish(&mut search, MixCpu::missing("no PID: give --pid N"));
    assert!(search.mix_what_if.is_empty());
    let x = search.endpoint_split.as_ref().unwrap();
    assert_eq!(x.limits.len(), 1, "the pool alone: {:?}", x.limits);
}

/// Issue 53's CPU-bound mix: the CPU held the mix and every endpoint
/// queued alike on it, so `HEAD /work` (50 ms on a pool of 10) had no limit
/// of its own; its pool is kept beside the CPU, a floor from the
/// connections seen open.
#[test]
fn r53_11_a_pool_its_endpoint_did_not_queue_on_is_a_limit_beside_the_cpu() {
    let o = objective();
    // /search 30 ms of CPU (20%), /orders 50 ms on 8 connections (80%):
    // the CPU binds at 1000 / (0.2 x 30 + 0.8 x 0.5) = 156/s, the pool at
    // 8 / (0.8 x 50 ms) = 200/s; the search held 100/s.
    let at = |rate: f64, passed: bool, wait: f64| {
        let mut st = step(&o, rate, 0, 0);
        st.passed = passed;
        st.attack.endpoints[0].latency_ms.p50 = 30.0 + wait;
        st.attack.endpoints[1].latency_ms.p50 = 50.0 + wait;
        st.signals = Some(Signals {
            downstream: vec![Downstream {
                endpoint: "127.0.0.1:5432".into(),
                connections: 8,
            }],
            ..Signals::default()
        });
        st
    };
    let search = || Search {
        capacity_rps: Some(100.0),
        failed_rps: Some(110.0),
        steps: vec![at(100.0, true, 0.0), at(110.0, false, 300.0)],
        ..empty_search()
    };
    let mut s = search();
    finish(&mut s, cpu(30.0));
    let x = s.endpoint_split.as_ref().unwrap();
    assert!(x.shared, "{x:?}");
    let bounds: Vec<(Resource, f64, bool)> = (x.limits.iter())
        .map(|l| (l.resource, (l.bound_rps * 10.0).round() / 10.0, l.at_least))
        .collect();
    assert_eq!(
        bounds,
        [(Resource::Cpu, 156.3, false), (Resource::Pool, 200.0, true)]
    );
    let pool = &x.limits[1];
    assert_eq!(pool.endpoints, ["GET /orders"]);
    assert_eq!(
        (pool.size, pool.name.as_deref()),
        (Some(8.0), Some("127.0.0.1:5432"))
    );
    // Two downstreams: which one /orders holds is not known, so none.
    let mut two = search();
    for st in &mut two.steps {
        let sig = st.signals.as_mut().unwrap();
        sig.downstream.push(Downstream {
            endpoint: "127.0.0.1:11211".into(),
            connections: 2,
        });
    }
    finish(&mut two, cpu(30.0));
    assert_eq!(two.endpoint_split.unwrap().limits.len(), 1);
    // Connections that would bind at or under the capacity found did not
    // bind (the endpoint would have queued): none.
    let mut few = search();
    for st in &mut few.steps {
        st.signals.as_mut().unwrap().downstream[0].connections = 3;
    }
    finish(&mut few, cpu(30.0));
    assert_eq!(few.endpoint_split.unwrap().limits.len(), 1);
}
