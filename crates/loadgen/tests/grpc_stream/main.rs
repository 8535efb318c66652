//! gRPC streaming calls held end to end over real sockets: server-streaming
//! (`Ticks`) and bidirectional (`Echo`) calls on grpcio, the reference
//! implementation we did not write (`scripts/foreign-services/grpc_server.py`),
//! and odd servers ([`odd`], the `h2` crate's server). Every run's
//! identities are checked.

#[path = "../common/grpcio.rs"]
mod grpcio;
mod odd;

use std::time::{Duration, Instant};

use grpcio::Grpcio;
use iolab_loadgen::held::{attack, combine, HeldError};
use iolab_loadgen::{AttackReport, Hooks};
use iolab_model::attack::{ConnectionCounts, HeldKind, HeldPlan, MessageCounts};
use iolab_model::protocol::GrpcCall;
use odd::End;

/// `n` calls of `method` with `data`, started at 50/s, each held `hold`,
/// a 2 s timeout; the types from the server's reflection.
pub fn plan(url: &str, method: &str, data: &str, n: u32, hold: Duration) -> HeldPlan {
    HeldPlan {
        target: url.into(),
        kind: HeldKind::Grpc,
        connections: n,
        open_rate: 50.0,
        hold,
        message_rate: 0.0,
        message: String::new(),
        timeout: Duration::from_secs(2),
        insecure: false,
        grpc: Some(GrpcCall {
            method: format!("iolab.test.Greeter/{method}"),
            data: data.into(),
            protos: Vec::new(),
        }),
        metadata: Vec::new(),
        source_addrs: Vec::new(),
        shard: None,
    }
}

/// Run a plan, check every identity, and that it ended within `bound`.
pub fn run(plan: &HeldPlan, bound: Duration) -> AttackReport {
    let t = Instant::now();
    let report = attack(plan, &Hooks::default()).expect("gRPC stream run starts");
    assert!(
        t.elapsed() < bound,
        "took {:?}, bound {bound:?}",
        t.elapsed()
    );
    report.result.check_accounting().expect("identities hold");
    report
}

fn sections(r: &AttackReport) -> (&ConnectionCounts, &MessageCounts) {
    let r = &r.result;
    (
        r.connections.as_ref().unwrap(),
        r.messages.as_ref().unwrap(),
    )
}

/// grpcio's sync server holds a worker thread per open call: enough of
/// them that no call of a test waits for one.
fn grpcio() -> Option<Grpcio> {
    Grpcio::start(&["--workers", "16"])
}

#[test]
fn server_streaming_counts_every_pushed_message_and_times_it_from_its_stamp() {
    let Some(s) = grpcio() else { return };
    let data = r#"{"count":20,"every_ms":20}"#;
    let r = run(
        &plan(&s.url(), "Ticks", data, 4, Duration::from_secs(5)),
        Duration::from_secs(5),
    );
    let (c, m) = sections(&r);
    assert_eq!((c.attempted, c.established), (4, 4), "{c:?}");
    assert_eq!(c.closed_by_server.get("grpc_status:OK"), Some(&4), "{c:?}");
    assert_eq!((m.sent, m.answered, m.lost), (80, 80, 0), "{m:?}");
    assert_eq!(m.latency_from, "push");
    let lat = m.latency_ms.as_ref().expect("stamped messages are timed");
    assert!(lat.max < 1_000.0, "{lat:?}");
    assert_eq!(r.result.status_codes.get("200"), Some(&4));
}

#[test]
fn a_server_streaming_call_over_tls_counts_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let key = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
    let (cert, pem) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, key.cert.pem()).unwrap();
    std::fs::write(&pem, key.key_pair.serialize_pem()).unwrap();
    let (cert, pem) = (cert.display().to_string(), pem.display().to_string());
    let Some(s) = Grpcio::start(&["--tls", &cert, &pem]) else {
        return;
    };
    let url = s.url().replace("grpc://", "grpcs://");
    let mut p = plan(
        &url,
        "Ticks",
        r#"{"count":5,"every_ms":10}"#,
        2,
        Duration::from_secs(5),
    );
    p.insecure = true;
    let r = run(&p, Duration::from_secs(5));
    let (c, m) = sections(&r);
    assert_eq!(c.closed_by_server.get("grpc_status:OK"), Some(&2), "{c:?}");
    assert_eq!((m.sent, m.answered), (10, 10), "{m:?}");
}

#[test]
fn bidirectional_echoes_are_timed_from_their_intended_send_and_none_is_lost() {
    let Some(s) = grpcio() else { return };
    let mut p = plan(
        &s.url(),
        "Echo",
        r#"{"text":"hi"}"#,
        4,
        Duration::from_secs(1),
    );
    p.message_rate = 20.0;
    let r = run(&p, Duration::from_secs(6));
    let (c, m) = sections(&r);
    assert_eq!(c.held, 4, "{c:?}");
    // The first message at open, then 20/s for the 1 s hold: 21 a call.
    assert!((4 * 20..=4 * 22).contains(&m.sent), "{m:?}");
    assert_eq!(
        (m.answered, m.lost, m.in_flight_at_end),
        (m.sent, 0, 0),
        "{m:?}"
    );
    assert_eq!(
        (m.latency_from.as_str(), m.rate_per_connection),
        ("echo", Some(20.0))
    );
    assert_eq!(m.message_bytes, Some(4), "the --data message, encoded");
    assert!(m.latency_ms.is_some());
}

#[test]
fn a_stream_the_server_never_ends_is_held_for_the_hold_then_cancelled() {
    // Two workers: the second run's calls are served only if the first
    // run's cancels (RST_STREAM CANCEL) freed the server's threads.
    let Some(s) = Grpcio::start(&["--workers", "2"]) else {
        return;
    };
    let p = plan(
        &s.url(),
        "Ticks",
        r#"{"every_ms":10}"#,
        2,
        Duration::from_millis(800),
    );
    for _ in 0..2 {
        let r = run(&p, Duration::from_secs(4));
        let (c, m) = sections(&r);
        assert_eq!((c.established, c.held), (2, 2), "{c:?}");
        assert!(m.answered >= 2 * 40, "{m:?}");
        assert_eq!(m.sent, m.answered + m.lost);
    }
}

#[test]
fn a_non_ok_status_ends_or_refuses_a_call_by_its_code() {
    let Some(s) = grpcio() else { return };
    let ended = r#"{"count":3,"code":8}"#;
    let r = run(
        &plan(&s.url(), "Ticks", ended, 3, Duration::from_secs(5)),
        Duration::from_secs(5),
    );
    let (c, m) = sections(&r);
    assert_eq!(
        c.closed_by_server.get("grpc_status:RESOURCE_EXHAUSTED"),
        Some(&3),
        "{c:?}"
    );
    assert_eq!(m.answered, 9);
    let refused = r#"{"code":14}"#;
    let r = run(
        &plan(&s.url(), "Ticks", refused, 3, Duration::from_secs(5)),
        Duration::from_secs(5),
    );
    let (c, _) = sections(&r);
    assert_eq!(c.established, 0, "{c:?}");
    assert_eq!(c.failed.get("grpc_status:UNAVAILABLE"), Some(&3), "{c:?}");
    let by_class = r.result.errors.classes();
    assert!(by_class.contains(&("grpc_status", 3)), "{by_class:?}");
}

#[test]
fn a_server_that_resets_its_streams_breaks_each_call_as_reset() {
    let server = odd::spawn(2, Duration::from_millis(300), End::Reset);
    let mut p = plan(&server.url(), "Ticks", "{}", 3, Duration::from_secs(5));
    p.grpc.as_mut().unwrap().protos = vec![grpcio::proto()];
    let r = run(&p, Duration::from_secs(5));
    let (c, m) = sections(&r);
    assert_eq!(c.broken.get("reset"), Some(&3), "{c:?}");
    assert_eq!((m.answered, m.lost), (6, 0), "{m:?}");
}

#[test]
fn each_call_carries_the_metadata_given() {
    let server = odd::spawn(1, Duration::from_secs(60), End::Reset);
    let mut p = plan(&server.url(), "Ticks", "{}", 2, Duration::from_millis(200));
    p.grpc.as_mut().unwrap().protos = vec![grpcio::proto()];
    p.metadata = vec![("x-tenant".into(), "a".into())];
    run(&p, Duration::from_secs(4));
    assert_eq!(
        *server.seen.tenants.lock().unwrap(),
        vec!["a".to_string(); 2]
    );
}

#[test]
fn each_call_is_cancelled_with_rst_stream_cancel_when_its_hold_ends() {
    let server = odd::spawn(1, Duration::from_secs(60), End::Reset);
    let mut p = plan(&server.url(), "Ticks", "{}", 3, Duration::from_millis(300));
    p.grpc.as_mut().unwrap().protos = vec![grpcio::proto()];
    let r = run(&p, Duration::from_secs(4));
    assert_eq!(sections(&r).0.held, 3);
    // The server's side of the reset may land just after the run returns.
    let t = Instant::now();
    while server.seen.resets.lock().unwrap().len() < 3 && t.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        *server.seen.resets.lock().unwrap(),
        vec![h2::Reason::CANCEL; 3]
    );
}

#[test]
fn a_stream_without_status_or_with_a_bad_message_breaks_by_its_class() {
    for (end, class) in [
        (End::NoStatus, "no_status"),
        (End::Oversize, "oversize"),
        (End::Compressed, "malformed"),
    ] {
        let server = odd::spawn(2, Duration::from_millis(100), end);
        let mut p = plan(&server.url(), "Ticks", "{}", 2, Duration::from_secs(5));
        p.grpc.as_mut().unwrap().protos = vec![grpcio::proto()];
        let r = run(&p, Duration::from_secs(4));
        let (c, m) = sections(&r);
        assert_eq!(c.broken.get(class), Some(&2), "{end:?}: {c:?}");
        assert_eq!((m.answered, m.lost), (4, 0), "{end:?}: {m:?}");
    }
}

/// A reset that comes before the client read the head (h2 drops the
/// head then) fails the call as `reset`, not as a failed connect.
#[test]
fn r52_10_a_call_reset_before_its_head_is_read_fails_as_reset_not_connect() {
    let server = odd::spawn(0, Duration::ZERO, End::Reset);
    let mut p = plan(&server.url(), "Ticks", "{}", 3, Duration::from_secs(5));
    p.grpc.as_mut().unwrap().protos = vec![grpcio::proto()];
    let r = run(&p, Duration::from_secs(5));
    let (c, _) = sections(&r);
    assert_eq!(c.attempted, 3);
    // Each call either saw the head first (broken) or not (failed): never `connect`.
    let reset = c.failed.get("reset").unwrap_or(&0) + c.broken.get("reset").unwrap_or(&0);
    assert_eq!(reset, 3, "{c:?}");
    assert!(r
        .result
        .errors
        .classes()
        .contains(&("stream_reset", c.failed_total())));
}

#[test]
fn a_unary_or_misfit_call_is_refused_in_one_line_before_any_load() {
    let Some(s) = grpcio() else { return };
    let one_line = |p: &HeldPlan, words: &[&str]| {
        let Err(e) = attack(p, &Hooks::default()) else {
            panic!("{} ran; it should be refused", p.target)
        };
        assert!(
            matches!(e, HeldError::Plan(_) | HeldError::Grpc(_)),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(
            !text.contains('\n') && words.iter().all(|w| text.contains(w)),
            "{text}"
        );
    };
    let h = Duration::from_secs(1);
    one_line(
        &plan(&s.url(), "SayHello", "{}", 1, h),
        &["unary", "--hold"],
    );
    one_line(&plan(&s.url(), "Nope", "{}", 1, h), &["no method 'Nope'"]);
    let mut p = plan(&s.url(), "Ticks", "{}", 1, h);
    p.message_rate = 2.0;
    one_line(&p, &["--message-rate", "server-streaming"]);
    let p = plan(&s.url(), "Ticks", r#"{"count":"x"}"#, 1, h);
    one_line(&p, &["--data", "iolab.test.TickRequest"]);
}

#[test]
fn two_runs_merge_into_one_document_exactly() {
    let Some(s) = grpcio() else { return };
    let data = r#"{"count":5,"every_ms":10}"#;
    let p = plan(&s.url(), "Ticks", data, 2, Duration::from_secs(5));
    let docs: Vec<_> = (0..2)
        .map(|i| (format!("run{i}"), run(&p, Duration::from_secs(5)).result))
        .collect();
    let merged = combine::merge_documents(&docs).expect("merges");
    let (c, m) = (merged.connections.unwrap(), merged.messages.unwrap());
    assert_eq!((c.attempted, c.closed_by_server["grpc_status:OK"]), (4, 4));
    assert_eq!((m.sent, m.answered), (20, 20));
}
