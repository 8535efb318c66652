//! Held connections end to end over real sockets: WebSocket echo and SSE
//! push against the built-in thread models' `GET /ws` and `GET /events`
//! (here), odd servers written in the test ([`odd`]) and a server not
//! written by us, Python's `websockets` ([`foreign`]). Every run's
//! identities are checked ([`run`]).

#[path = "../common/mod.rs"]
mod common;
mod foreign;
#[path = "../common/grpcio.rs"]
mod grpcio;
mod odd;
mod shards;

use std::time::{Duration, Instant};

use iolab_loadgen::held::{attack, merge};
use iolab_loadgen::{AttackReport, Hooks};
use iolab_model::attack::{AttackResult, ConnectionCounts, HeldKind, HeldPlan, MessageCounts};
use iolab_model::ModelKind;
use iolab_servers::{start, Running, ServeConfig};

/// A WebSocket plan: `n` connections opened at 200/s, each held `hold`
/// with `rate` messages a second, a 1 s timeout.
pub fn ws(url: &str, n: u32, hold: Duration, rate: f64) -> HeldPlan {
    HeldPlan {
        target: url.into(),
        kind: HeldKind::Ws,
        connections: n,
        open_rate: 200.0,
        hold,
        message_rate: rate,
        message: "hello".into(),
        timeout: Duration::from_secs(1),
        insecure: false,
        grpc: None,
        metadata: Vec::new(),
        source_addrs: Vec::new(),
        shard: None,
    }
}

/// The SSE plan of the same shape.
pub fn sse(url: &str, n: u32, hold: Duration) -> HeldPlan {
    HeldPlan {
        kind: HeldKind::Sse,
        ..ws(url, n, hold, 0.0)
    }
}

/// Run a plan, check every identity, and that it ended within `bound`.
pub fn run(plan: &HeldPlan, bound: Duration) -> AttackReport {
    let t = Instant::now();
    let report = attack(plan, &Hooks::default()).expect("held run starts");
    assert!(
        t.elapsed() < bound,
        "took {:?}, bound {bound:?}",
        t.elapsed()
    );
    report.result.check_accounting().expect("identities hold");
    report
}

/// The two held sections of a document.
pub fn sections(r: &AttackResult) -> (&ConnectionCounts, &MessageCounts) {
    (
        r.connections.as_ref().unwrap(),
        r.messages.as_ref().unwrap(),
    )
}

fn serve(model: ModelKind) -> Running {
    let mut config = ServeConfig::new(model);
    config.grace = Duration::from_secs(1);
    start(config, "127.0.0.1:0".parse().unwrap()).unwrap()
}

/// The models that hold a connection: on a thread or on an event loop's task.
const HOLDING: [ModelKind; 5] = [
    ModelKind::ThreadPerRequest,
    ModelKind::Pool,
    ModelKind::LoopBlocking,
    ModelKind::LoopOffload,
    ModelKind::LoopAsync,
];

#[test]
fn every_message_is_echoed_and_timed_by_the_thread_and_event_loop_models() {
    for model in HOLDING {
        let srv = serve(model);
        let url = format!("ws://{}/ws", srv.addr);
        let r = run(
            &ws(&url, 6, Duration::from_millis(1500), 20.0),
            Duration::from_secs(10),
        );
        let (c, m) = sections(&r.result);
        assert_eq!(
            (c.attempted, c.established, c.held),
            (6, 6, 6),
            "{model}: {c:?}"
        );
        // 30 sends in 1.5 s at 20/s, the last one due before the hold ends.
        assert!(m.sent >= 6 * 28 && m.sent <= 6 * 30, "{model}: {m:?}");
        assert_eq!(
            (m.answered, m.lost, m.in_flight_at_end),
            (m.sent, 0, 0),
            "{model}"
        );
        let lat = m.latency_ms.as_ref().expect("echo latency measured");
        assert!(lat.p50 > 0.0 && lat.p99 < 1000.0, "{model}: {lat:?}");
        assert_eq!(r.result.status_codes.get("101"), Some(&6));
        srv.stop().unwrap();
    }
}

#[test]
fn each_message_runs_the_requests_steps_before_its_echo() {
    let srv = serve(ModelKind::ThreadPerRequest);
    let url = format!("ws://{}/ws?steps=sleep:30", srv.addr);
    let r = run(
        &ws(&url, 2, Duration::from_secs(1), 5.0),
        Duration::from_secs(8),
    );
    let (_, m) = sections(&r.result);
    assert_eq!(m.answered, m.sent);
    assert!(m.latency_ms.as_ref().unwrap().p50 >= 30.0, "{m:?}");
    srv.stop().unwrap();
}

#[test]
fn events_are_numbered_and_timed_from_the_servers_stamp() {
    for model in HOLDING {
        let srv = serve(model);
        let url = format!("http://{}/events?every=50ms", srv.addr);
        let r = run(
            &sse(&url, 4, Duration::from_secs(1)),
            Duration::from_secs(8),
        );
        let (c, m) = sections(&r.result);
        assert_eq!((c.established, c.held), (4, 4), "{model}: {c:?}");
        assert!(m.answered >= 4 * 15, "{model}: {m:?}");
        assert_eq!(
            (m.sent, m.lost, m.latency_from.as_str()),
            (m.answered, 0, "push")
        );
        assert!(m.latency_ms.as_ref().unwrap().p99 < 500.0, "{model}: {m:?}");
        srv.stop().unwrap();
    }
}

#[test]
fn each_message_runs_its_steps_on_an_event_loop_too() {
    let srv = serve(ModelKind::LoopAsync);
    let url = format!("ws://{}/ws?steps=sleep:30", srv.addr);
    let r = run(
        &ws(&url, 2, Duration::from_secs(1), 5.0),
        Duration::from_secs(8),
    );
    let (_, m) = sections(&r.result);
    assert_eq!(m.answered, m.sent);
    assert!(m.latency_ms.as_ref().unwrap().p50 >= 30.0, "{m:?}");
    srv.stop().unwrap();
}

#[test]
fn the_sequential_model_does_not_hold_and_says_so_by_status() {
    let srv = serve(ModelKind::Sequential);
    let url = format!("ws://{}/ws", srv.addr);
    let r = run(
        &ws(&url, 2, Duration::from_secs(1), 5.0),
        Duration::from_secs(8),
    );
    let (c, _) = sections(&r.result);
    assert_eq!(c.failed.get("status_501"), Some(&2), "{c:?}");
    srv.stop().unwrap();
}

#[test]
fn two_runs_merge_exactly() {
    let srv = serve(ModelKind::ThreadPerRequest);
    let url = format!("ws://{}/ws", srv.addr);
    let a = run(
        &ws(&url, 3, Duration::from_millis(500), 10.0),
        Duration::from_secs(8),
    )
    .result;
    let b = run(
        &ws(&url, 2, Duration::from_millis(500), 10.0),
        Duration::from_secs(8),
    )
    .result;
    let mut m = a.clone();
    merge(&mut m, &b).unwrap();
    let (mc, mm) = sections(&m);
    let ((ac, am), (bc, bm)) = (sections(&a), sections(&b));
    assert_eq!(mc.attempted, ac.attempted + bc.attempted);
    assert_eq!(mc.held, ac.held + bc.held);
    assert_eq!(mm.sent, am.sent + bm.sent);
    assert_eq!(mm.answered, am.answered + bm.answered);
    mc.check().unwrap();
    mm.check().unwrap();
    let h = iolab_loadgen::shard::hist::decode_base64(mm.histogram.as_ref().unwrap()).unwrap();
    assert_eq!(
        h.len(),
        mm.answered,
        "the merged histogram holds every answer"
    );
    srv.stop().unwrap();
}

#[test]
fn a_closed_port_fails_every_attempt_as_connect() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let r = run(
        &ws(
            &format!("ws://127.0.0.1:{port}/ws"),
            3,
            Duration::from_secs(1),
            2.0,
        ),
        Duration::from_secs(3),
    );
    let (c, m) = sections(&r.result);
    assert_eq!(
        (c.attempted, c.established, c.failed.get("connect")),
        (3, 0, Some(&3))
    );
    assert_eq!(
        (m.sent, m.latency_ms.is_none()),
        (0, true),
        "nothing measured, nothing printed"
    );
    assert_eq!(r.result.errors.refused, 3);
}

#[test]
fn held_documents_match_the_attack_schema() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/attack.schema.json"
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let srv = serve(ModelKind::ThreadPerRequest);
    let url = format!("ws://{}/ws", srv.addr);
    let doc = run(
        &ws(&url, 2, Duration::from_millis(300), 10.0),
        Duration::from_secs(5),
    )
    .result;
    let doc = serde_json::to_value(&doc).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(doc["connections"]["held"].is_u64() && doc["messages"]["sent"].is_u64());
    srv.stop().unwrap();
}

#[test]
fn a_stopped_run_counts_what_was_open_and_never_opened() {
    let srv = serve(ModelKind::ThreadPerRequest);
    let url = format!("ws://{}/ws", srv.addr);
    let mut plan = ws(&url, 40, Duration::from_secs(20), 10.0);
    plan.open_rate = 20.0;
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hooks = Hooks {
        cancel: Some(cancel.clone()),
        ..Hooks::default()
    };
    let stop = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(600));
        cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let t = Instant::now();
    let r = attack(&plan, &hooks).unwrap();
    stop.join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    r.result.check_accounting().unwrap();
    let (c, m) = sections(&r.result);
    assert!(r.cancelled && r.result.interrupted);
    assert!(c.open_at_end > 0 && c.open_at_end == c.established, "{c:?}");
    assert_eq!(r.result.requests.planned, 40);
    assert_eq!(r.result.requests.not_sent, 40 - c.attempted, "never opened");
    assert_eq!(m.sent, m.answered + m.lost + m.in_flight_at_end);
    srv.stop().unwrap();
}

/// Issue 52: `iolab attack ws://... --source-addrs` was silently ignored
/// (bench-held: 14,204 of 19,000 established from one address, the port
/// search stalling the generator's loop). Now connections come from the
/// addresses named, in turn (a listener here records each peer and hangs
/// up, so the handshakes fail and are counted as such), and a source that
/// cannot reach the target is one line before anything opens.
#[test]
fn r52_14_held_connections_come_from_the_source_addresses_given() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let peers = std::thread::spawn(move || {
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..6 {
            let (s, peer) = listener.accept().unwrap();
            seen.insert(peer.ip());
            drop(s);
        }
        seen
    });
    let ips: Vec<std::net::IpAddr> =
        vec!["127.0.0.2".parse().unwrap(), "127.0.0.3".parse().unwrap()];
    let mut plan = ws(
        &format!("ws://{addr}/ws"),
        6,
        Duration::from_millis(200),
        1.0,
    );
    plan.source_addrs = ips.clone();
    let r = run(&plan, Duration::from_secs(10));
    let c = r.result.connections.unwrap();
    assert_eq!((c.attempted, c.established), (6, 0), "{:?}", c.failed);
    assert_eq!(peers.join().unwrap().into_iter().collect::<Vec<_>>(), ips);
    plan.source_addrs = vec!["10.1.2.3".parse().unwrap()];
    let Err(e) = attack(&plan, &Hooks::default()) else {
        panic!("a source that cannot reach the target was taken");
    };
    let e = e.to_string();
    assert!(e.starts_with("--source-addrs 10.1.2.3 cannot reach"), "{e}");
}
