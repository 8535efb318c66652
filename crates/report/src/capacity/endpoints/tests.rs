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

/// A search named `url` of `steps`, failed at 100/s.
fn search(steps: Vec<StepRecord>) -> Search {
    Search {
        name: "url".into(),
        target: "t".into(),
        notes: Vec::new(),
        step_rule: String::new(),
        steps,
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
        mix_cpu: None,
        mix_what_if: Vec::new(),
    }
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
    let s = search(vec![st]);
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
        limits: Vec::new(),
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

#[test]
fn a_mixs_cpu_limits_and_what_ifs_in_words_from_their_figures() {
    use crate::capacity::mix_cpu::{cpu_line, limits_line, lines};
    use iolab_model::capacity::{EndpointCpu, MixCpu, MixLimit, MixWhatIf, Resource};
    let e = |template: &str, share: f64, cpu_ms: Option<f64>, requests: u64| EndpointCpu {
        method: "GET".into(),
        template: template.into(),
        share,
        cpu_ms,
        service_ms: None,
        requests,
        seconds: 1.0,
        fraction: None,
        missing: cpu_ms
            .is_none()
            .then(|| "none of its 4 requests answered".into()),
    };
    let c = MixCpu::of(
        vec![
            e("/work", 0.2, Some(13.0), 77),
            e("/health", 0.8, Some(0.25), 300),
        ],
        Some(0.02),
        1.0,
        Some(1.0),
    );
    assert_eq!(
        cpu_line(&c),
        "CPU per endpoint (each alone, one request at a time, before the search; 0.02 cores burnt idle taken off): GET /work 13.0ms a request (77 requests; 92.9% of the mix's CPU), GET /health 0.25ms a request (300 requests; 7.1% of the mix's CPU); the mix 2.80ms a request on 1 core, which it had 100% of the time it wanted one over the probe: the CPU allows it at most 357/s"
    );
    let gap = MixCpu::of(vec![e("/work", 0.2, None, 0)], None, 2.0, None);
    assert!(cpu_line(&gap).contains("GET /work missing (none of its 4 requests answered)"));
    assert!(cpu_line(&gap).ends_with("the CPU's bound on the mix is not known"));
    assert_eq!(
        cpu_line(&MixCpu::missing("no PID: give --pid N")),
        "CPU per endpoint: not measured (no PID: give --pid N); the CPU's bound on the mix is not known"
    );
    let limits = vec![
        MixLimit {
            resource: Resource::Cpu,
            size: Some(1.0),
            name: None,
            endpoints: vec!["GET /work".into()],
            bound_rps: 357.0,
            at_least: false,
        },
        MixLimit {
            resource: Resource::Pool,
            size: Some(10.0),
            name: Some("127.0.0.1:5432".into()),
            endpoints: vec!["HEAD /q".into()],
            bound_rps: 667.0,
            at_least: false,
        },
    ];
    assert_eq!(
        limits_line(&limits, &c, Some(330.0)).unwrap(),
        "what bounds the mix: the CPU (1 core; GET /work uses 92.9% of it) binds first at 357/s; the 10 connections to 127.0.0.1:5432 (HEAD /q) would at 667/s"
    );
    assert!(limits_line(&limits, &c, Some(100.0))
        .unwrap()
        .starts_with("what bounds the mix: the capacity found (100/s) is under half of every limit in sight, so something else binds; the CPU (1 core; GET /work uses 92.9% of it) would at 357/s; "));
    // A pool its endpoint did not queue on: the connections seen, a floor.
    let mut floor = limits.clone();
    floor[1].at_least = true;
    assert!(limits_line(&floor, &c, Some(330.0)).unwrap().ends_with(
        "; the 10 connections seen open to 127.0.0.1:5432 (HEAD /q, which did not queue) would at 667/s or above"
    ));
    let mut s = Search {
        mix_cpu: Some(c),
        mix_what_if: vec![MixWhatIf {
            change: "a pool of 20".into(),
            simulated_rps: 1400.0,
            cpu_rps: 357.0,
            capacity_rps: 357.0,
            cpu_caps: true,
        }],
        ..Search::default()
    };
    assert_eq!(
        lines(&s)[1..],
        [
            "what each change buys the mix (the fitted service simulated, the CPU from the probe beside it):".to_string(),
            "  a pool of 20: the service simulated serves 1,400/s, but the CPU caps the mix at 357/s (GET /work uses 92.9% of it)".to_string(),
        ]
    );
    s.mix_cpu = None;
    assert!(lines(&s).is_empty());
}

#[test]
fn a_replayed_mix_charts_each_endpoints_p99_against_the_rate() {
    let at = |rate: f64, search_p99: f64| {
        let mut st = StepRecord {
            rate_rps: rate,
            ..StepRecord::default()
        };
        st.attack.endpoints = vec![
            ep("/search", 0.25, 25, search_p99),
            ep("/health", 0.75, 75, 1.0),
        ];
        st
    };
    let mut s = search(vec![at(100.0, 20.0), at(200.0, 412.0)]);
    let charts = crate::capacity::charts(&s);
    let (id, svg) = (charts.iter())
        .find(|(id, _)| id.ends_with("-p99-per-endpoint-vs-rate"))
        .expect("a chart of the endpoints");
    assert!(id.starts_with("url-"), "{id}");
    assert!(
        svg.contains("GET /search") && svg.contains("GET /health"),
        "{svg}"
    );
    assert!(svg.contains("p99 412.0 ms of 25 answered"), "{svg}");
    // Not a mix: no such chart.
    for st in &mut s.steps {
        st.attack.endpoints.truncate(1);
    }
    let ids: Vec<String> = crate::capacity::charts(&s)
        .into_iter()
        .map(|c| c.0)
        .collect();
    assert!(ids.iter().all(|i| !i.contains("per-endpoint")), "{ids:?}");
}
