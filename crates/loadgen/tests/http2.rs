//! `--http2` against real HTTP/2 servers on loopback (the `h2` crate's
//! server, and hand-written ones that break the protocol): requests carried
//! as streams of shared connections, the server's stream limit met on the
//! clock, and every HTTP/2 failure counted in its own class, with
//! `sent = ok + non_2xx + errors` holding throughout.

mod common;
#[path = "common/h2server.rs"]
mod h2server;

use std::time::Duration;

use h2::Reason;
use h2server::Behaviour;
use iolab_loadgen::{attack, Hooks};
use iolab_model::attack::AttackPlan;
use iolab_model::driver::{ConnectionMode, Driver};
use iolab_model::protocol::HttpVersion;

/// `plan` over HTTP/2 with `connections` x `streams`.
fn http2(mut plan: AttackPlan, connections: u32, streams: u32) -> AttackPlan {
    plan.request.protocol.http = HttpVersion::Http2;
    plan.request.protocol.streams = streams;
    plan.connections = ConnectionMode::KeepAlive { max: connections };
    plan.threads = Some(1);
    plan
}

/// A closed loop of `clients` sending `requests` in all.
fn closed(url: &str, clients: u32, requests: u64) -> AttackPlan {
    AttackPlan {
        timeout: Duration::from_secs(2),
        ..AttackPlan::new(
            url,
            Driver::Closed {
                concurrency: clients,
                requests: Some(requests),
                duration: None,
            },
        )
    }
}

#[test]
fn h2c_open_loop_carries_requests_as_streams_of_few_connections() {
    let s = h2server::spawn(Behaviour::Serve {
        delay: Duration::from_millis(20),
        max_streams: 100,
    });
    let plan = http2(common::open(&s.url("/x"), 200.0, 0.5), 2, 8);
    let r = common::run(&plan).result;
    assert!(r.requests.sent >= 90, "{:?}", r.requests);
    assert_eq!(r.requests.ok, r.requests.sent, "{:?}", r.errors);
    let p = r.protocol.expect("an HTTP/2 run says so");
    assert_eq!((p.version.as_str(), p.streams), ("h2c", 8));
    // 200/s for 20 ms is 4 in flight: one connection of 8 streams holds them.
    assert!((1..=2).contains(&p.connections_opened), "{p:?}");
    assert_eq!(p.server_max_streams, Some(100));
}

#[test]
fn a_lower_server_stream_limit_makes_requests_wait_on_the_clock() {
    let s = h2server::spawn(Behaviour::Serve {
        delay: Duration::from_millis(50),
        max_streams: 2,
    });
    // One connection of 8 streams, the server allowing 2: 16 requests go
    // 2 at a time, 8 rounds of 50 ms at the least.
    let plan = http2(closed(&s.url("/"), 1, 16), 1, 8);
    let r = common::run(&plan).result;
    assert_eq!((r.requests.sent, r.requests.ok), (16, 16), "{:?}", r.errors);
    let p = r.protocol.expect("an HTTP/2 run says so");
    assert_eq!(
        (p.server_max_streams, p.streams_waiting()),
        (Some(2), Some(6))
    );
    assert_eq!(p.connections_opened, 1);
    // The slowest request waited for a free stream: three rounds before its own.
    assert!(r.latency_ms.max >= 150.0, "{:?}", r.latency_ms);
}

#[test]
fn resets_count_by_code_and_refused_streams_apart() {
    for (reason, class, code) in [
        (
            Reason::INTERNAL_ERROR,
            "stream_reset",
            Some("INTERNAL_ERROR"),
        ),
        (Reason::REFUSED_STREAM, "refused_stream", None),
    ] {
        let s = h2server::spawn(Behaviour::Reset(reason));
        let r = common::run(&http2(closed(&s.url("/"), 1, 12), 1, 4)).result;
        assert_eq!(r.requests.sent, 12);
        let counted = r.errors.classes().into_iter().find(|(n, _)| *n == class);
        assert_eq!(counted, Some((class, 12)), "{:?}", r.errors);
        let by_code = r
            .errors
            .by_code
            .get(class)
            .and_then(|c| c.get(code.unwrap_or("")));
        assert_eq!(by_code.copied(), code.map(|_| 12), "{:?}", r.errors.by_code);
    }
}

#[test]
fn goaway_mid_run_refuses_the_rest_and_a_new_connection_carries_on() {
    let s = h2server::spawn(Behaviour::GoawayAfter(5));
    let r = common::run(&http2(closed(&s.url("/"), 1, 30), 1, 1)).result;
    assert_eq!(r.requests.sent, 30);
    assert!(r.requests.ok >= 25, "{:?} {:?}", r.requests, r.errors);
    assert_eq!(
        r.requests.ok + r.errors.goaway + r.errors.reset,
        30,
        "{:?}",
        r.errors
    );
    let p = r.protocol.expect("an HTTP/2 run says so");
    assert!(p.connections_opened >= 5, "{p:?}");
}

#[test]
fn a_frame_past_the_agreed_size_is_a_protocol_error() {
    let s = h2server::breaks_frame_size();
    let r = common::run(&http2(closed(&s.url("/"), 1, 3), 1, 1)).result;
    assert_eq!(r.requests.sent, 3);
    assert_eq!(r.errors.protocol_error, 3, "{:?}", r.errors);
    assert_eq!(
        r.errors.by_code["protocol_error"].get("FRAME_SIZE_ERROR"),
        Some(&3)
    );
}

#[test]
fn a_server_answering_http1_to_http2_is_refused_before_any_load() {
    let s = h2server::http1_only();
    let e =
        attack(&http2(closed(&s.url("/"), 1, 3), 1, 1), &Hooks::default()).expect_err("refused");
    let e = e.to_string();
    assert!(
        e.contains("prior knowledge") && e.contains("--http2") && !e.contains('\n'),
        "{e}"
    );
}

#[test]
fn streams_without_http2_are_refused_naming_the_flag() {
    let mut plan = closed("http://127.0.0.1:1/", 1, 1);
    plan.request.protocol.streams = 4;
    let e = attack(&plan, &Hooks::default())
        .expect_err("refused")
        .to_string();
    assert!(e.contains("--http2") && !e.contains('\n'), "{e}");
}
