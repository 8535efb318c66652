use super::*;

fn rec(method: &str, target: &str, headers: &[(&str, &str)]) -> Recorded {
    Recorded {
        method: method.into(),
        target: target.into(),
        headers: headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        ..Recorded::default()
    }
}

#[test]
fn endpoints_group_by_method_and_template_with_shares() {
    let mut b = MixBuilder::new(Routes::default(), Safety::default());
    for i in 0..6 {
        b.add(rec("GET", &format!("/orders/{i}?x=1"), &[]));
    }
    for _ in 0..3 {
        b.add(rec("GET", "/health", &[]));
    }
    b.add(rec("HEAD", "/orders/9", &[]));
    let m = b.finish();
    let got: Vec<(&str, &str, u64)> = m
        .endpoints
        .iter()
        .map(|e| (e.method.as_str(), e.template.as_str(), e.recorded))
        .collect();
    assert_eq!(
        got,
        [
            ("GET", "/orders/{id}", 6),
            ("GET", "/health", 3),
            ("HEAD", "/orders/{id}", 1)
        ]
    );
    assert!((m.endpoints[0].share - 0.6).abs() < 1e-9);
    assert_eq!(m.sequence[6].endpoint, 1, "sequence follows the ranking");
}

#[test]
fn writes_are_skipped_and_credentials_dropped_unless_allowed() {
    let mut b = MixBuilder::new(Routes::default(), Safety::default());
    b.add(rec("POST", "/orders", &[]));
    b.add(rec("DELETE", "/orders/1", &[]));
    b.add(rec(
        "GET",
        "/me",
        &[
            ("Cookie", "s=1"),
            ("Authorization", "Bearer x"),
            ("Accept", "*/*"),
            (":path", "/me"),
            ("Host", "prod"),
        ],
    ));
    let m = b.finish();
    assert_eq!(m.total, 1);
    let h: Vec<&str> = m.sequence[0]
        .request
        .headers
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(h, ["Accept"]);
    let line = m.skipped_line().unwrap();
    assert!(
        line.contains("1 DELETE, 1 POST") && line.contains("--allow-writes"),
        "{line}"
    );
    assert!(
        line.contains("authorization x1, cookie x1") && !line.contains('\n'),
        "{line}"
    );

    let safety = Safety {
        allow_writes: true,
        keep_auth: vec!["authorization".into()],
    };
    let mut b = MixBuilder::new(Routes::default(), safety);
    b.add(rec(
        "POST",
        "/orders",
        &[("Authorization", "Bearer x"), ("Cookie", "s=1")],
    ));
    let m = b.finish();
    assert_eq!(m.total, 1);
    assert_eq!(
        m.sequence[0].request.header("authorization"),
        Some("Bearer x")
    );
    assert_eq!(m.sequence[0].request.header("cookie"), None);
}

#[test]
fn a_weighted_list_keeps_the_shares_and_spreads_them() {
    let mut b = MixBuilder::new(Routes::default(), Safety::default());
    for (path, n) in [("/a", 70), ("/b", 20), ("/c", 9), ("/d", 1)] {
        for _ in 0..n {
            b.add(rec("GET", path, &[]));
        }
    }
    let m = b.finish();
    let (list, of) = m.weighted(1000);
    assert_eq!(list.len(), 1000);
    let count = |e: u32| of.iter().filter(|x| **x == e).count();
    assert_eq!([count(0), count(1), count(2), count(3)], [700, 200, 90, 10]);
    // Spread: /b shows up in every run of ten.
    assert!(of.chunks(10).all(|c| c.contains(&1)), "{:?}", &of[..20]);
    assert!(list
        .iter()
        .zip(&of)
        .all(|(r, e)| r.url == m.endpoints[*e as usize].template));
}

#[test]
fn routes_past_the_endpoint_limit_are_grouped_and_said() {
    let mut b = MixBuilder::new(Routes::default(), Safety::default());
    for i in 0..MAX_ENDPOINTS + 50 {
        b.add(rec("GET", &format!("/blog/post-{i}"), &[]));
    }
    b.add(rec("GET", "/blog/post-1", &[]));
    let m = b.finish();
    assert_eq!(m.endpoints.len(), MAX_ENDPOINTS + 1);
    let other = m.endpoints.iter().find(|e| e.template == OTHER).unwrap();
    assert_eq!(other.recorded, 50);
    assert_eq!(m.endpoints[0].template, OTHER, "most requests first");
    let line = m.skipped_line().unwrap();
    assert!(
        line.contains("grouped 50 requests") && line.contains("--route"),
        "{line}"
    );
}
