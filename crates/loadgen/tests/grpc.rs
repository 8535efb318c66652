//! gRPC unary calls against a real grpcio server (gRPC's reference
//! implementation, `scripts/foreign-services/grpc_server.py`): calls made
//! with the method's types from `--proto` or from the server's reflection,
//! a status other than OK counted by its code (never as a transport
//! error), a deadline, and every bad call refused in one line before any
//! load. `sent = ok + non_2xx + errors` is checked on every run.

mod common;
#[path = "common/grpcio.rs"]
mod grpcio;

use std::time::Duration;

use grpcio::Grpcio;
use iolab_loadgen::{attack, Hooks};
use iolab_model::attack::AttackPlan;
use iolab_model::driver::{ConnectionMode, Driver};
use iolab_model::protocol::{GrpcCall, HttpVersion};

/// A closed loop of `clients` making `calls` calls of `method` with
/// `data`, the types from `protos` (none: reflection).
fn call(url: &str, method: &str, data: &str, protos: &[std::path::PathBuf]) -> AttackPlan {
    let mut plan = AttackPlan {
        timeout: Duration::from_secs(5),
        threads: Some(1),
        connections: ConnectionMode::KeepAlive { max: 4 },
        ..AttackPlan::new(
            url,
            Driver::Closed {
                concurrency: 4,
                requests: Some(40),
                duration: None,
            },
        )
    };
    plan.request.protocol.http = HttpVersion::Http2;
    plan.request.protocol.grpc = Some(GrpcCall {
        method: method.into(),
        data: data.into(),
        protos: protos.to_vec(),
    });
    plan
}

/// The one-line error of a plan refused before any load.
fn refused(plan: &AttackPlan) -> String {
    let e = attack(plan, &Hooks::default())
        .expect_err("refused before any load")
        .to_string();
    assert!(!e.contains('\n') && !e.is_empty(), "{e}");
    e
}

#[test]
fn unary_calls_by_reflection_and_by_proto_are_the_same_call() {
    let Some(s) = Grpcio::start(&[]) else { return };
    for protos in [vec![], vec![grpcio::proto()]] {
        let plan = call(
            &s.url(),
            "iolab.test.Greeter/SayHello",
            r#"{"name":"iolab"}"#,
            &protos,
        );
        let r = common::run(&plan).result;
        assert_eq!((r.requests.sent, r.requests.ok), (40, 40), "{:?}", r.errors);
        assert_eq!(r.status_codes.get("200"), Some(&40), "{:?}", r.status_codes);
        let p = r.protocol.expect("a gRPC run says so");
        assert_eq!(
            p.grpc_method.as_deref(),
            Some("iolab.test.Greeter/SayHello")
        );
        assert_eq!((p.version.as_str(), p.connections_opened), ("h2c", 4));
        // The message reached the server as written: Fail's `code` field
        // makes it end with that status, the same by either source of types.
        let plan = call(
            &s.url(),
            "iolab.test.Greeter/Fail",
            r#"{"code":5}"#,
            &protos,
        );
        let r = common::run(&plan).result;
        assert_eq!(
            (r.requests.ok, r.errors.grpc_status),
            (0, 40),
            "{:?}",
            r.errors
        );
        assert_eq!(r.errors.by_code["grpc_status"]["NOT_FOUND"], 40);
    }
}

#[test]
fn statuses_other_than_ok_count_by_code_never_as_transport_errors() {
    let Some(s) = Grpcio::start(&[]) else { return };
    let proto = [grpcio::proto()];
    for (code, name) in [
        (14, "UNAVAILABLE"),
        (3, "INVALID_ARGUMENT"),
        (16, "UNAUTHENTICATED"),
    ] {
        let data = format!(r#"{{"code":{code}}}"#);
        let r = common::run(&call(&s.url(), "iolab.test.Greeter/Fail", &data, &proto)).result;
        assert_eq!(r.requests.sent, 40);
        assert_eq!(r.requests.non_2xx, 0, "{:?}", r.status_codes);
        assert_eq!(r.errors.total(), 40, "{:?}", r.errors);
        assert_eq!(r.errors.grpc_status, 40, "{name}: {:?}", r.errors);
        assert_eq!(
            r.errors.by_code["grpc_status"][name], 40,
            "{:?}",
            r.errors.by_code
        );
    }
    let r = common::run(&call(
        &s.url(),
        "iolab.test.Greeter/Fail",
        r#"{"code":0}"#,
        &proto,
    ))
    .result;
    assert_eq!((r.requests.ok, r.errors.total()), (40, 0), "{:?}", r.errors);
}

#[test]
fn a_call_past_its_deadline_is_never_ok() {
    let Some(s) = Grpcio::start(&[]) else { return };
    let mut plan = call(
        &s.url(),
        "iolab.test.Greeter/SayHello",
        r#"{"delayMs":400}"#,
        &[],
    );
    plan.timeout = Duration::from_millis(100);
    plan.driver = Driver::Closed {
        concurrency: 4,
        requests: Some(8),
        duration: None,
    };
    let r = common::run(&plan).result;
    assert_eq!(r.requests.sent, 8);
    // The server may end it first (DEADLINE_EXCEEDED, from grpc-timeout), or
    // the generator's own timeout: either way late, never ok.
    let deadline = r
        .errors
        .by_code
        .get("grpc_status")
        .and_then(|c| c.get("DEADLINE_EXCEEDED"));
    assert_eq!(
        r.errors.timeout + deadline.copied().unwrap_or(0),
        8,
        "{:?}",
        r.errors
    );
}

#[test]
fn bad_calls_are_refused_in_one_line_before_any_load() {
    let Some(s) = Grpcio::start(&[]) else { return };
    let url = s.url();
    let proto = [grpcio::proto()];
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.proto");
    std::fs::write(
        &broken,
        "syntax = \"proto3\";\nmessage M { string name = ; }\n",
    )
    .unwrap();
    let cases: Vec<(AttackPlan, &[&str])> = vec![
        (
            call(&url, "iolab.test.Greeter/SayHello", "{}", &[broken]),
            &["--proto", "broken.proto"][..],
        ),
        (
            call(&url, "iolab.test.Greeter/Nope", "{}", &proto),
            &["no method 'Nope'", "SayHello"][..],
        ),
        (
            call(&url, "iolab.test.Nobody/SayHello", "{}", &proto),
            &["no service", "iolab.test.Greeter"][..],
        ),
        (
            call(
                &url,
                "iolab.test.Greeter/SayHello",
                r#"{"nme":"x"}"#,
                &proto,
            ),
            &["--data", "iolab.test.HelloRequest"][..],
        ),
        (
            call(&url, "iolab.test.Greeter/SayHello", "{not json", &[]),
            &["--data", "iolab.test.HelloRequest"][..],
        ),
        (
            call(&url, "iolab.test.Greeter/Chatter", "{}", &[]),
            &["server-streaming", "--hold"][..],
        ),
        (
            call(&url, "iolab.test.Greeter/Nope", "{}", &[]),
            &["no method 'Nope'"][..],
        ),
        (
            call(&url, "iolab.test.Nobody/SayHello", "{}", &[]),
            &["reflection", "--proto"][..],
        ),
        (
            call(&url, "Greeter", "{}", &[]),
            &["package.Service/Method"][..],
        ),
        (
            call(
                &url.replace("grpc://", "http://"),
                "iolab.test.Greeter/SayHello",
                "{}",
                &[],
            ),
            &["--call needs a grpc://"][..],
        ),
    ];
    for (plan, words) in &cases {
        let e = refused(plan);
        for w in *words {
            assert!(e.contains(w), "{:?}: {e}", plan.request.protocol.grpc);
        }
    }
    let mut plain = call(&url, "x.Y/Z", "{}", &[]);
    plain.request.protocol.grpc = None;
    assert!(refused(&plain).contains("--call"));
}

#[test]
fn a_server_without_reflection_is_refused_naming_proto() {
    let Some(s) = Grpcio::start(&["--no-reflection"]) else {
        return;
    };
    let e = refused(&call(&s.url(), "iolab.test.Greeter/SayHello", "{}", &[]));
    assert!(
        e.contains("offers no reflection") && e.contains("--proto FILE"),
        "{e}"
    );
    // The same server called with the .proto: served.
    let plan = call(
        &s.url(),
        "iolab.test.Greeter/SayHello",
        "{}",
        &[grpcio::proto()],
    );
    assert_eq!(common::run(&plan).result.requests.ok, 40);
}
