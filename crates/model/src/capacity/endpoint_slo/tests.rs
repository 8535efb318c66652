//! The per-endpoint objective: its parser and its judging.

use super::*;

fn parse(s: &str) -> EndpointSlo {
    EndpointSlo::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn parses_endpoints_the_rest_and_the_overall_part() {
    let o = parse("GET /orders/{id}:p99<200ms; *:success>=99.9% ; p50<1s");
    assert_eq!(o.endpoints.len(), 1);
    assert_eq!(o.endpoints[0].method, "GET");
    assert_eq!(o.endpoints[0].template, "/orders/{id}");
    assert_eq!(o.endpoints[0].slo.to_string(), "p99<200ms");
    assert_eq!(o.rest.as_ref().unwrap().to_string(), "success>=99.9%");
    assert_eq!(o.overall.as_ref().unwrap().to_string(), "p50<1000ms");
    assert_eq!(
        o.to_string(),
        "GET /orders/{id}:p99<200ms; *:success>=99.9%; p50<1000ms"
    );
    assert_eq!(parse(&o.to_string()), o);
    // The envelope holds every clause: the step length's tightest bound.
    assert_eq!(o.envelope().tightest_ms(), Some(200.0));
    assert!(EndpointSlo::is_per_endpoint("GET /a:p99<1s"));
    assert!(!EndpointSlo::is_per_endpoint("p99<200ms,success>=99.9%"));
}

#[test]
fn an_endpoint_without_clauses_takes_the_rests_then_the_overall_ones() {
    let o = parse("GET /a:p99<100ms; *:p99<300ms");
    assert_eq!(
        o.for_endpoint("GET", "/a").unwrap().to_string(),
        "p99<100ms"
    );
    assert_eq!(
        o.for_endpoint("GET", "/b").unwrap().to_string(),
        "p99<300ms"
    );
    // Without *, the part over every request; without either, none.
    let o = parse("GET /a:p99<100ms; p99<300ms");
    assert_eq!(
        o.for_endpoint("GET", "/b").unwrap().to_string(),
        "p99<300ms"
    );
    assert!(parse("GET /a:p99<100ms")
        .for_endpoint("GET", "/b")
        .is_none());
}

#[test]
fn bad_forms_are_one_line_naming_the_fault() {
    for (bad, says) in [
        ("", "no clause"),
        (" ; ", "no clause"),
        ("get /a:p99<1s", "METHOD /template"),
        ("GET a:p99<1s", "METHOD /template"),
        ("/a:p99<1s", "METHOD /template"),
        ("GET /a:p99", "a latency clause is pQ<BOUND"),
        ("GET /a:p99<1s; GET /a:p50<1s", "given twice"),
        ("*:p99<1s; *:p50<1s", "given twice"),
        ("GET /a:", "no clause"),
    ] {
        let e = EndpointSlo::parse(bad).unwrap_err().to_string();
        assert!(e.contains(says) && !e.contains('\n'), "{bad}: {e}");
    }
    let o = parse("GET /a:p99<1s");
    let e = o
        .check_recorded(&["GET /b".into(), "POST /c".into()])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "'GET /a' is not an endpoint of the recording; it has: GET /b, POST /c"
    );
}

/// `n` planned requests, `late` of them answered at 400 ms, the rest at
/// 50 ms, `failed` of the rest not 2xx.
fn judge(
    o: &EndpointSlo,
    template: &str,
    n: u64,
    late: u64,
    failed: u64,
) -> Option<EndpointVerdict> {
    let within = move |ms: f64| if ms >= 400.0 { n } else { n - late };
    let quantile = move |q: f64| {
        Some(if q * n as f64 <= (n - late) as f64 {
            50.0
        } else {
            400.0
        })
    };
    o.judge(
        "GET",
        template,
        &EndpointObserved {
            planned: n,
            ok: n - failed,
            answered_within: &within,
            quantile_ms: &quantile,
        },
    )
}

#[test]
fn each_endpoint_is_judged_by_its_own_clauses() {
    let o = parse("GET /search:p99<200ms; *:success>=99%");
    let v = judge(&o, "/search", 1000, 5, 0).unwrap();
    assert!(v.met, "{v:?}");
    assert_eq!(
        v.within,
        vec![Within {
            below_ms: 200.0,
            answered: 995
        }]
    );
    let v = judge(&o, "/search", 1000, 20, 0).unwrap();
    assert!(!v.met);
    let m = v.miss.unwrap();
    assert_eq!(m.observed, Some(400.0));
    assert!((m.by - 2.0).abs() < 1e-9, "{m:?}");
    assert!(m.text.contains("98% answered within 200ms"), "{}", m.text);
    // /orders takes *'s: slow answers pass it, failures do not.
    assert!(judge(&o, "/orders", 1000, 500, 0).unwrap().met);
    let v = judge(&o, "/orders", 1000, 0, 30).unwrap();
    let m = v.miss.unwrap();
    assert_eq!(m.observed, Some(0.97));
    assert!((m.by - 3.0).abs() < 1e-6, "{m:?}");
    // Without * or an overall part an unnamed endpoint is not judged on its own.
    assert!(judge(&parse("GET /search:p99<200ms"), "/orders", 10, 10, 10).is_none());
}

#[test]
fn a_miss_past_every_answer_saves_as_null() {
    let m = Miss {
        clause: Clause::Success { at_least: 0.99 },
        observed: None,
        by: f64::INFINITY,
        text: "x".into(),
    };
    let j = serde_json::to_string(&m).unwrap();
    assert!(j.contains("\"by\":null"), "{j}");
    let back: Miss = serde_json::from_str(&j).unwrap();
    assert_eq!(back.by, f64::INFINITY);
}
