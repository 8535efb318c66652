//! Hostile round 4 (issue 49), HTTP/2 and gRPC: servers written frame by
//! frame on loopback (`common/h2raw.rs`) that never acknowledge PING, send
//! SETTINGS a client must refuse, flood interim heads or headers, or lie
//! about gRPC's framing. Each test is named after its finding (`r38_N_*`);
//! every run's `sent = ok + non_2xx + errors` is checked by `common::run`.

mod common;
#[path = "common/h2raw.rs"]
mod h2raw;

use std::time::{Duration, Instant};

use h2raw::{data, field, grpc_answer, grpc_prefix, headers, ok, status, Script};
use iolab_loadgen::{attack, Hooks};
use iolab_model::attack::{AttackPlan, AttackResult};
use iolab_model::driver::{ConnectionMode, Driver};
use iolab_model::protocol::{GrpcCall, HttpVersion};

/// `requests` requests over HTTP/2 from one client on one connection.
fn http2(url: &str, requests: u64) -> AttackPlan {
    let mut plan = AttackPlan {
        timeout: Duration::from_secs(3),
        threads: Some(1),
        connections: ConnectionMode::KeepAlive { max: 1 },
        ..AttackPlan::new(
            url,
            Driver::Closed {
                concurrency: 1,
                requests: Some(requests),
                duration: None,
            },
        )
    };
    plan.request.protocol.http = HttpVersion::Http2;
    plan
}

/// `requests` calls of the test Greeter's SayHello, its types from
/// `greeter.proto`.
fn grpc(server: &h2raw::RawServer, requests: u64) -> AttackPlan {
    let mut plan = http2(server.url("grpc").trim_end_matches('/'), requests);
    let proto = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts/foreign-services/greeter.proto");
    plan.request.protocol.grpc = Some(GrpcCall {
        method: "iolab.test.Greeter/SayHello".into(),
        data: r#"{"name":"x"}"#.into(),
        protos: vec![proto],
    });
    plan
}

/// The one-line error of a plan refused before any load.
fn refused(plan: &AttackPlan) -> String {
    match attack(plan, &Hooks::default()) {
        Ok(r) => panic!(
            "ran, not refused: {:?} {:?}",
            r.result.requests, r.result.errors
        ),
        Err(e) => {
            let e = e.to_string();
            assert!(!e.contains('\n'), "{e}");
            e
        }
    }
}

/// How many errors of `class` were counted under `code`.
fn by_code(r: &AttackResult, class: &str, code: &str) -> u64 {
    let codes = r.errors.by_code.get(class);
    codes.and_then(|c| c.get(code)).copied().unwrap_or(0)
}

/// Finding 1: a server that serves every request but never answers PING
/// had each request wait on a new connection's PING until it timed out.
#[test]
fn r38_1_a_server_that_never_answers_ping_is_still_used() {
    let s = h2raw::spawn(Script {
        ack_ping: false,
        ..Script::answering(ok)
    });
    let started = Instant::now();
    let r = common::run(&http2(&s.url("http"), 20)).result;
    assert_eq!((r.requests.sent, r.requests.ok), (20, 20), "{:?}", r.errors);
    let p = r.protocol.expect("an HTTP/2 run says so");
    assert_eq!(p.connections_opened, 1, "{p:?}");
    // One PING wait (1 s) at most, not 20 timeouts of 3 s.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}");
}

/// Finding 2: SETTINGS_ENABLE_PUSH=1 from a server is a connection error
/// (RFC 9113 6.5.2); it counted `reset`. Refused before the run when the
/// check meets it, `protocol_error` when the run does; no request is
/// written on such a connection.
#[test]
fn r38_2_a_server_enabling_push_is_a_protocol_error() {
    let push = vec![(h2raw::ENABLE_PUSH, 1)];
    let s = h2raw::spawn(Script {
        settings: push.clone(),
        ..Script::answering(ok)
    });
    let e = refused(&http2(&s.url("http"), 5));
    assert!(e.contains("SETTINGS_ENABLE_PUSH=1"), "{e}");
    let s = h2raw::spawn(Script {
        settings: push,
        clean_first: true,
        ..Script::answering(ok)
    });
    let r = common::run(&http2(&s.url("http"), 6)).result;
    assert_eq!(r.requests.sent, 6);
    assert_eq!(r.errors.protocol_error, 6, "{:?}", r.errors);
    assert_eq!(by_code(&r, "protocol_error", "PROTOCOL_ERROR"), 6);
    assert_eq!(s.requests(), 0, "a request was written");
}

/// Finding 2: a SETTINGS_MAX_HEADER_LIST_SIZE no request head fits (1
/// byte) counted `reset`; the head is not written (as Go's client), a
/// `protocol_error`, and the connection kept.
#[test]
fn r38_2_a_header_list_limit_below_the_head_is_a_protocol_error() {
    let s = h2raw::spawn(Script {
        settings: vec![(h2raw::MAX_HEADER_LIST_SIZE, 1)],
        ..Script::answering(ok)
    });
    let r = common::run(&http2(&s.url("http"), 6)).result;
    assert_eq!(r.requests.sent, 6);
    assert_eq!(
        by_code(&r, "protocol_error", "PROTOCOL_ERROR"),
        6,
        "{:?}",
        r.errors
    );
    assert_eq!(s.requests(), 0, "a request was written");
    assert_eq!(r.protocol.map(|p| p.connections_opened), Some(1));
}

/// Finding 3: an out-of-range SETTINGS value was refused as "it did not
/// answer HTTP/2's preface"; now the setting is named, and in the run it
/// is a `protocol_error` by its code.
#[test]
fn r38_3_invalid_settings_are_named_not_taken_for_http1() {
    for (id, value, named, code) in [
        (
            h2raw::INITIAL_WINDOW_SIZE,
            1 << 31,
            "SETTINGS_INITIAL_WINDOW_SIZE=2147483648",
            "FLOW_CONTROL_ERROR",
        ),
        (
            h2raw::MAX_FRAME_SIZE,
            100,
            "SETTINGS_MAX_FRAME_SIZE=100",
            "PROTOCOL_ERROR",
        ),
    ] {
        let script = Script {
            settings: vec![(id, value)],
            ..Script::answering(ok)
        };
        let s = h2raw::spawn(script.clone());
        let e = refused(&http2(&s.url("http"), 3));
        assert!(e.contains(named) && !e.contains("preface"), "{e}");
        let s = h2raw::spawn(Script {
            clean_first: true,
            ..script
        });
        let r = common::run(&http2(&s.url("http"), 3)).result;
        assert_eq!(
            by_code(&r, "protocol_error", code),
            3,
            "{named}: {:?}",
            r.errors
        );
    }
}

/// Finding 4: `--max-headers 10` was ignored over HTTP/2 (301 headers
/// were `ok`); past it the answer is a `read`, as over HTTP/1.1.
#[test]
fn r38_4_max_headers_holds_over_http2() {
    let s = h2raw::spawn(Script::answering(|id| {
        let mut block = status(200);
        for i in 0..300 {
            block.extend(field(&format!("x-h{i}"), "v"));
        }
        headers(id, true, &block)
    }));
    let mut plan = http2(&s.url("http"), 4);
    plan.max_headers = Some(10);
    let r = common::run(&plan).result;
    assert_eq!((r.requests.sent, r.errors.read), (4, 4), "{:?}", r.errors);
    plan.max_headers = Some(400);
    let r = common::run(&plan).result;
    assert_eq!(r.requests.ok, 4, "{:?}", r.errors);
}

/// Finding 4: 10,000 interim heads were accepted over HTTP/2; more than
/// 32 before the final answer is a `read`, at once, as over HTTP/1.1.
#[test]
fn r38_4_more_than_32_interim_heads_is_a_read_over_http2() {
    fn interim(n: usize) -> impl Fn(u32) -> Vec<u8> {
        move |id| {
            let mut bytes = Vec::new();
            for _ in 0..n {
                bytes.extend(headers(id, false, &status(100)));
            }
            bytes.extend(ok(id));
            bytes
        }
    }
    let s = h2raw::spawn(Script::answering(interim(32)));
    let r = common::run(&http2(&s.url("http"), 3)).result;
    assert_eq!(r.requests.ok, 3, "{:?}", r.errors);
    for n in [33, 10_000] {
        let s = h2raw::spawn(Script::answering(interim(n)));
        let started = Instant::now();
        let r = common::run(&http2(&s.url("http"), 3)).result;
        assert_eq!(r.errors.read, 3, "{n}: {:?}", r.errors);
        assert!(started.elapsed() < Duration::from_secs(3), "{n}");
    }
}

/// Finding 5: HTTP 204 or 206 with no `grpc-status` counted `ok`; a gRPC
/// answer is HTTP 200, any other status `non_2xx`.
#[test]
fn r38_5_grpc_204_or_206_is_non_2xx() {
    for code in [204u16, 206] {
        let s = h2raw::spawn(Script::answering(move |id| {
            headers(id, true, &status(code))
        }));
        let r = common::run(&grpc(&s, 4)).result;
        assert_eq!(
            (r.requests.ok, r.requests.non_2xx),
            (0, 4),
            "{code}: {:?}",
            r.errors
        );
        assert_eq!(r.status_codes.get(&code.to_string()), Some(&4));
    }
    let s = h2raw::spawn(Script::answering(|id| {
        let mut body = grpc_prefix(false, 2);
        body.extend_from_slice(b"\x0a\x00");
        grpc_answer(id, &[], &body, true)
    }));
    let r = common::run(&grpc(&s, 4)).result;
    assert_eq!(r.requests.ok, 4, "{:?}", r.errors);
}

/// Finding 6: gRPC's framing was never checked: a message cut short, a
/// compressed flag with no `grpc-encoding`, a 4 GiB length prefix were
/// `ok` (or waited for). Each is a `read`, the prefix at once.
#[test]
fn r38_6_grpc_body_framing_is_checked() {
    let cut = |id| {
        grpc_answer(
            id,
            &[],
            &[grpc_prefix(false, 10), b"abc".to_vec()].concat(),
            true,
        )
    };
    let packed = |id| {
        grpc_answer(
            id,
            &[],
            &[grpc_prefix(true, 2), b"ab".to_vec()].concat(),
            true,
        )
    };
    let huge = |id| grpc_answer(id, &[], &grpc_prefix(false, u32::MAX), false);
    for (what, answer) in [
        (
            "cut",
            Box::new(cut) as Box<dyn Fn(u32) -> Vec<u8> + Send + Sync>,
        ),
        ("compressed", Box::new(packed)),
        ("4 GiB", Box::new(huge)),
    ] {
        let s = h2raw::spawn(Script::answering(answer));
        let started = Instant::now();
        let r = common::run(&grpc(&s, 3)).result;
        assert_eq!(r.errors.read, 3, "{what}: {:?}", r.errors);
        assert!(started.elapsed() < Duration::from_secs(3), "{what}: waited");
    }
    let gzip = field("grpc-encoding", "gzip");
    let s = h2raw::spawn(Script::answering(move |id| {
        grpc_answer(
            id,
            &gzip,
            &[grpc_prefix(true, 2), b"ab".to_vec()].concat(),
            true,
        )
    }));
    let r = common::run(&grpc(&s, 3)).result;
    assert_eq!(r.requests.ok, 3, "{:?}", r.errors);
}

/// A reflection answer (`ServerReflectionResponse`) carrying one file,
/// `name`, that imports `import`: a whole gRPC answer on stream `id`.
fn reflection_answer(id: u32, name: &str, import: &str) -> Vec<u8> {
    use prost::Message;
    let file = prost_types::FileDescriptorProto {
        name: Some(name.into()),
        dependency: vec![import.into()],
        ..Default::default()
    };
    let field = |tag: u8, bytes: &[u8]| {
        let mut f = vec![tag];
        prost::encoding::encode_varint(bytes.len() as u64, &mut f);
        f.extend_from_slice(bytes);
        f
    };
    // file_descriptor_response (4) { file_descriptor_proto (1) }
    let answer = field(0x22, &field(0x0a, &file.encode_to_vec()));
    let body = [grpc_prefix(false, answer.len() as u32), answer].concat();
    grpc_answer(id, &[], &body, true)
}

/// A plan calling by reflection (no `--proto`).
fn by_reflection(server: &h2raw::RawServer) -> AttackPlan {
    let mut plan = grpc(server, 1);
    if let Some(call) = &mut plan.request.protocol.grpc {
        call.protos.clear();
    }
    plan
}

/// Finding 7: a server answering each reflection call with the same file
/// and a new import ran 6,515 calls in 100 s (the limit counted distinct
/// names). At most 500 calls now, within 30 s for all of them.
#[test]
fn r38_7_reflection_stops_at_500_calls() {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = calls.clone();
    let s = h2raw::spawn(Script::answering(move |id| {
        let n = counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        reflection_answer(id, "a.proto", &format!("d{n}.proto"))
    }));
    let started = Instant::now();
    let e = refused(&by_reflection(&s));
    assert!(e.contains("over 500 files") && e.contains("--proto"), "{e}");
    let calls = calls.load(std::sync::atomic::Ordering::Relaxed);
    assert!((500..=502).contains(&calls), "{calls} calls");
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// Finding 8: a 300 MB reflection answer was read whole (RSS 1.3 GB);
/// an answer is cut at 16 MiB, refused naming the cap.
#[test]
fn r38_8_a_reflection_answer_over_16_mib_is_refused() {
    let s = h2raw::spawn(Script::answering(|id| {
        let mut block = status(200);
        block.extend(field("content-type", "application/grpc"));
        let mut bytes = headers(id, false, &block);
        for _ in 0..(17 << 20) / 16_384 {
            bytes.extend(data(id, false, &[0u8; 16_384]));
        }
        bytes
    }));
    let e = refused(&by_reflection(&s));
    assert!(e.contains("over 16 MiB"), "{e}");
}

/// Finding 9: `--proto /dev/zero` took 4.2 GB in 13 s; `--proto` goes
/// through the capped reader: a device is refused at once, in one line.
#[test]
fn r38_9_proto_files_go_through_the_capped_reader() {
    let port = common::closed_port();
    let mut plan = http2(&format!("grpc://127.0.0.1:{port}"), 1);
    plan.request.protocol.grpc = Some(GrpcCall {
        method: "a.B/C".into(),
        data: "{}".into(),
        protos: vec!["/dev/zero".into()],
    });
    let started = Instant::now();
    let e = refused(&plan);
    assert!(e.contains("/dev/zero") && e.contains("not a file"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

/// Finding 12: a reflection error's text (escape sequences, a bell, a
/// newline) was printed raw; it is shown escaped, in one line.
#[test]
fn r38_12_a_reflection_error_is_printed_escaped() {
    let s = h2raw::spawn(Script::answering(|id| {
        let text = "\x1b[2J\x07boom\nkind: Secret";
        // error_response (7) { error_code (1): 5, error_message (2) }
        let mut error = vec![0x08, 5, 0x12, text.len() as u8];
        error.extend_from_slice(text.as_bytes());
        let answer = [vec![0x3a, error.len() as u8], error].concat();
        let body = [grpc_prefix(false, answer.len() as u32), answer].concat();
        grpc_answer(id, &[], &body, true)
    }));
    let e = refused(&by_reflection(&s));
    assert!(e.contains("boom") && e.contains("\\n"), "{e}");
    assert!(!e.chars().any(char::is_control), "{e:?}");
}
