//! Requests beyond a plain GET, against a real server that keeps what it
//! got: method, headers and body arrive as sent; a targets file's requests
//! go in turn; HEAD answers end at their head; HTTPS works over rustls with
//! a certificate made at test time, and an untrusted one is refused before
//! the run unless `insecure`.

mod common;

use common::{echo, open, run};
use iolab_model::request::{RequestSet, RequestTemplate};

fn template(url: &str, method: &str, body: &[u8]) -> RequestTemplate {
    let mut t = RequestTemplate::get(url);
    t.method = method.into();
    t.headers = vec![
        ("Content-Type".into(), "application/json".into()),
        ("X-Api-Key".into(), "secret".into()),
    ];
    t.body = body.to_vec();
    t
}

#[test]
fn method_headers_and_body_arrive_as_sent() {
    let server = echo::spawn(false);
    let url = server.url("/api/orders?x=1");
    let body = vec![b'a'; 1024];
    let mut plan = open(&url, 100.0, 0.3);
    plan.request = RequestSet {
        list: vec![template(&url, "POST", &body)],
        ..RequestSet::default()
    };
    let r = run(&plan);
    assert_eq!(r.result.requests.ok, r.result.requests.planned);
    let seen = server.seen();
    assert_eq!(seen.len() as u64, r.result.requests.ok);
    for s in &seen {
        assert_eq!(
            (s.method.as_str(), s.path.as_str()),
            ("POST", "/api/orders?x=1")
        );
        assert_eq!(s.header("x-api-key"), Some("secret"));
        assert_eq!(s.header("content-length"), Some("1024"));
        assert_eq!(s.body, body);
    }
}

#[test]
fn a_targets_list_is_sent_in_turn_and_head_ends_at_the_head() {
    let server = echo::spawn(false);
    let list = vec![
        RequestTemplate::get(server.url("/a")),
        template(&server.url("/b"), "PUT", b"{}"),
        template(&server.url("/c"), "HEAD", b""),
    ];
    let mut plan = open(&server.url("/a"), 60.0, 0.5);
    plan.threads = Some(1);
    plan.request = RequestSet {
        list,
        ..RequestSet::default()
    };
    let r = run(&plan);
    assert_eq!(
        r.result.requests.ok, r.result.requests.planned,
        "{:?}",
        r.result.errors
    );
    let seen = server.seen();
    let paths: Vec<&str> = seen.iter().map(|s| s.path.as_str()).collect();
    for (i, p) in paths.iter().enumerate() {
        assert_eq!(*p, ["/a", "/b", "/c"][i % 3], "{paths:?}");
    }
    assert!(seen.iter().any(|s| s.method == "HEAD"));
}

#[test]
fn https_with_a_certificate_made_now() {
    let server = echo::spawn(true);
    let url = server.url("/secure");
    let mut plan = open(&url, 50.0, 0.4);
    // Self-signed: refused before anything is sent, in one line naming the fix.
    let e = iolab_loadgen::attack(&plan, &Default::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("--insecure") && !e.contains('\n'), "{e}");
    assert!(server.seen().is_empty());
    plan.request.insecure = true;
    plan.request.list = vec![template(&url, "POST", b"{\"tls\":true}")];
    let r = run(&plan);
    assert_eq!(
        r.result.requests.ok, r.result.requests.planned,
        "{:?}",
        r.result.errors
    );
    let seen = server.seen();
    assert_eq!(seen.len() as u64, r.result.requests.ok);
    assert!(seen.iter().all(|s| s.body == b"{\"tls\":true}"));
    // A new connection per request: every request makes its own handshake.
    plan.connections = iolab_model::driver::ConnectionMode::NewPerRequest { max: 100 };
    let r = run(&plan);
    assert_eq!(
        r.result.requests.ok, r.result.requests.planned,
        "{:?}",
        r.result.errors
    );
}
