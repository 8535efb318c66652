//! The per-endpoint tables and the fails-first sentence.

use iolab_model::capacity::EndpointVerdict;

use super::*;

fn ep(template: &str, share: f64, sent: u64, p99: f64) -> EndpointResult {
    let mut e = EndpointResult {
        method: "GET".into(),
        template: template.into(),
        share,
        sent,
        ok: sent,
        ..EndpointResult::default()
    };
    e.latency_ms.p50 = p99 / 4.0;
    e.latency_ms.p99 = p99;
    e
}

fn miss(observed: Option<f64>) -> Miss {
    Miss {
        clause: Clause::Latency {
            percentile: 99.0,
            below_ms: 200.0,
        },
        observed,
        by: observed.map_or(f64::INFINITY, |v| v / 200.0),
        text: "x".into(),
    }
}

#[test]
fn the_endpoint_that_fails_first_in_one_sentence_from_its_figures() {
    let f = FirstFail {
        method: "GET".into(),
        template: "/search".into(),
        share: 0.2,
        rate_rps: 180.0,
        miss: miss(Some(412.0)),
    };
    assert_eq!(
        first_line(&f),
        "GET /search fails first: p99 412ms > 200ms at 180/s (its share 20%)"
    );
    let f = FirstFail {
        miss: miss(None),
        ..f
    };
    assert!(first_line(&f).contains("fewer than 99% of its requests answered (p99 < 200ms)"));
}

#[test]
fn a_table_per_endpoint_with_a_row_per_step() {
    let mut st = StepRecord {
        rate_rps: 100.0,
        ..StepRecord::default()
    };
    st.attack.endpoints = vec![ep("/search", 0.25, 25, 412.0), ep("/health", 0.75, 75, 1.0)];
    st.endpoints = vec![EndpointVerdict {
        method: "GET".into(),
        template: "/search".into(),
        met: false,
        miss: Some(miss(Some(412.0))),
        sent: 25,
        ok: 25,
        within: Vec::new(),
    }];
    let s = Search {
        name: "url".into(),
        target: "t".into(),
        notes: Vec::new(),
        step_rule: String::new(),
        steps: vec![st],
        capacity_rps: None,
        interval: None,
        failed_rps: Some(100.0),
        bracket_width_pct: None,
        outcome: String::new(),
        noise: Vec::new(),
        machine: None,
        fit: None,
        what_if: Vec::new(),
        elapsed_s: 0.0,
        sweep: None,
        fails_first: None,
        endpoint_split: None,
    };
    let t = text(&s).join("\n");
    assert!(t.contains("GET /search (recorded share 25%)"), "{t}");
    assert!(t.contains("missed: p99 412ms > 200ms"), "{t}");
    let health = t.split("GET /health").nth(1).unwrap();
    assert!(
        health.contains("75%") && health.trim_end().ends_with(" -"),
        "{t}"
    );
    assert_eq!(
        markdown(&s)
            .iter()
            .filter(|l| l.starts_with("### "))
            .count(),
        2
    );
    let mut none = s;
    none.steps[0].attack.endpoints.clear();
    assert!(text(&none).is_empty() && markdown(&none).is_empty());
}

#[test]
fn where_the_endpoints_waited_in_one_sentence() {
    use iolab_model::capacity::{EndpointResource, EndpointWait, NamedBy, Resource};
    let w = |t: &str, service: f64, q: f64, share: f64| EndpointWait {
        method: "GET".into(),
        template: t.into(),
        service_ms: service,
        queued_ms: q,
        share,
        held: Some(660.0 * share * service / 1000.0),
        waits_on: None,
    };
    let mut x = EndpointSplit {
        low_rps: 100.0,
        failed_rps: 250.0,
        endpoints: vec![w("/a", 1.0, 109.0, 0.5), w("/b", 1.0, 112.0, 0.5)],
        shared: true,
    };
    assert_eq!(
        split_line(&x, Some("threads")),
        "per endpoint: from 100/s to 250/s the median queued GET /a +109ms, GET /b +112ms: one queue, so the binding resource (threads) binds each of them"
    );
    // One endpoint queued alone, holding as many as a pool's connections.
    x.endpoints = vec![
        w("/health", 0.1, 0.3, 0.5),
        w("/orders/{id}", 50.0, 180.0, 0.3),
        w("/search", 1.0, 2.0, 0.2),
    ];
    x.shared = false;
    assert_eq!(
        split_line(&x, Some("pool")),
        "per endpoint: from 100/s to 250/s the median queued GET /health +0.30ms, GET /orders/{id} +180ms, GET /search +2.00ms: not one queue; GET /orders/{id} queued, holding 9.9 at once at the capacity (its share 30% x 50.0ms each): no resource in sight has that size (the fit named pool for the whole mix)"
    );
    x.endpoints[1].waits_on = Some(EndpointResource {
        resource: Resource::Pool,
        size: Some(10.0),
        name: Some("127.0.0.1:5432".into()),
        by: NamedBy::Held,
    });
    assert_eq!(
        split_line(&x, None),
        "per endpoint: from 100/s to 250/s the median queued GET /health +0.30ms, GET /orders/{id} +180ms, GET /search +2.00ms: not one queue; GET /orders/{id} queued: at the capacity it held 9.9 at once (its share 30% x 50.0ms each), as many as the 10 connections to 127.0.0.1:5432, which binds it; the others did not queue"
    );
    x.endpoints[1].held = None;
    assert!(split_line(&x, None).ends_with("wait on a resource of their own"));
}
