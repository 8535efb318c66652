//! `iolab attack ws://...` and `iolab attack http://... --sse` end to end:
//! the real binary against the built-in thread models' `GET /ws` and
//! `GET /events` on 127.0.0.1; its document's held sections and their
//! identities; its text; and bad flags (one line, exit 2).

mod common;

use iolab_model::ModelKind;
use iolab_servers::Running;

use common::held::{document, iolab, refused, server};

fn serve() -> Running {
    server(ModelKind::ThreadPerRequest)
}

#[test]
fn a_websocket_run_prints_connections_and_messages_sections() {
    let srv = serve();
    let url = format!("ws://{}/ws", srv.addr);
    let args = [
        "attack",
        &url,
        "--connections",
        "10",
        "--hold",
        "1s",
        "--message-rate",
        "10/s",
    ];
    let doc = document(&iolab(
        &[&args[..], &["--message", "hello", "--json"]].concat(),
    ));
    let (c, m) = (doc.connections.unwrap(), doc.messages.unwrap());
    assert_eq!((c.attempted, c.established, c.held), (10, 10, 10));
    assert!(m.sent >= 90 && m.answered == m.sent && m.lost == 0, "{m:?}");
    assert!(m.latency_ms.is_some() && m.histogram.is_some());

    let text = iolab(&args);
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    for line in [
        "Connections",
        "Ended",
        "Messages",
        "Message lat.",
        "from each message's intended send",
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
    srv.stop().unwrap();
}

#[test]
fn an_sse_run_counts_events_by_id() {
    let srv = serve();
    let url = format!("http://{}/events?every=100ms", srv.addr);
    let out = iolab(&[
        "attack",
        &url,
        "--sse",
        "--connections",
        "3",
        "--hold",
        "1s",
        "--json",
    ]);
    let doc = document(&out);
    let (c, m) = (doc.connections.unwrap(), doc.messages.unwrap());
    assert_eq!((c.established, c.held), (3, 3));
    assert!(m.answered >= 3 * 8 && m.lost == 0, "{m:?}");
    assert_eq!(m.latency_from, "push");
    srv.stop().unwrap();
}

#[test]
fn bad_held_flags_are_one_line_and_exit_2() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["attack", "ws://127.0.0.1:1/ws", "--connections", "2"],
            "--hold",
        ),
        (
            &["attack", "ws://127.0.0.1:1/ws", "--hold", "1s"],
            "--connections",
        ),
        (
            &[
                "attack",
                "ws://127.0.0.1:1/ws",
                "--connections",
                "2",
                "--hold",
                "1s",
                "--rate",
                "5",
            ],
            "--open-rate",
        ),
        (
            &[
                "attack",
                "http://127.0.0.1:1/",
                "--rate",
                "5",
                "-d",
                "1s",
                "--hold",
                "1s",
            ],
            "ws://",
        ),
        (
            &[
                "attack",
                "http://127.0.0.1:1/e",
                "--sse",
                "--connections",
                "1",
                "--hold",
                "1s",
                "--message-rate",
                "2",
            ],
            "only receives",
        ),
        (
            &[
                "attack",
                "ws://127.0.0.1:1/ws",
                "--connections",
                "1",
                "--hold",
                "1s",
                "--message-rate",
                "2/x",
            ],
            "--message-rate",
        ),
    ];
    for (args, names) in cases {
        refused(&iolab(args), &[names]);
    }
}

#[test]
fn two_generators_held_documents_merge_into_one_exactly() {
    let srv = serve();
    let url = format!("ws://{}/ws", srv.addr);
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let mut docs = Vec::new();
    for (path, n) in [(&a, "4"), (&b, "3")] {
        let p = path.to_str().unwrap();
        let args = [
            "attack",
            &url,
            "--connections",
            n,
            "--hold",
            "500ms",
            "--message-rate",
            "10",
            "--json",
            "-o",
            p,
        ];
        docs.push(document(&iolab(&args)));
    }
    let merged = document(&iolab(&[
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--json",
    ]));
    let (c, m) = (merged.connections.unwrap(), merged.messages.unwrap());
    let sent: u64 = docs.iter().map(|d| d.messages.as_ref().unwrap().sent).sum();
    assert_eq!(
        (c.attempted, c.held, m.sent, m.answered),
        (7, 7, sent, sent)
    );
    assert_eq!(merged.requests.ok, 7);
    assert_eq!(merged.status_codes.get("101"), Some(&7));
    srv.stop().unwrap();
}

#[test]
fn r52_2_a_message_rate_of_0_holds_silently() {
    let srv = serve();
    let url = format!("ws://{}/ws", srv.addr);
    let out = iolab(&[
        "attack",
        &url,
        "--connections",
        "3",
        "--hold",
        "500ms",
        "--message-rate",
        "0",
        "--json",
    ]);
    let doc = document(&out);
    let (c, m) = (doc.connections.unwrap(), doc.messages.unwrap());
    assert_eq!((c.held, m.sent, m.latency_ms.is_none()), (3, 0, true));
    assert_eq!(m.rate_per_connection, Some(0.0));
    srv.stop().unwrap();
}

/// `--engine io_uring` on a held run was silently ignored (the run went
/// on tokio, the flag unread): the protocol table's row refuses it now,
/// by name, before any connection opens.
#[test]
fn r52_40_io_uring_on_a_held_run_is_refused_not_ignored() {
    for (url, extra, names) in [
        ("ws://127.0.0.1:1/ws", None, "WebSocket"),
        ("http://127.0.0.1:1/events", Some("--sse"), "SSE"),
    ] {
        let mut args = vec![
            "attack",
            url,
            "--connections",
            "1",
            "--hold",
            "1s",
            "--engine",
            "io_uring",
        ];
        args.extend(extra);
        let out = iolab(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("does not speak {names}")) && err.contains("--engine epoll"),
            "{err}"
        );
    }
}

/// The flags that shape a request run, refused on held connections and on
/// a gRPC streaming call alike, each with what to do instead in that run's
/// own words (one row each, `run_shape` in `cmd/attack/held.rs`), before
/// any connection is made.
#[test]
fn request_run_flags_are_refused_with_what_to_do_instead() {
    let ws = [
        "attack",
        "ws://127.0.0.1:1/ws",
        "--connections",
        "1",
        "--hold",
        "1s",
    ];
    let grpc = [
        "attack",
        "grpc://127.0.0.1:1",
        "--call",
        "a.B/C",
        "--hold",
        "1s",
        "--connections",
        "1",
    ];
    let cases: [(&[&str], &str, &str); 5] = [
        (
            &["--phase", "10s:5"],
            "--phase does not apply to held connections (ws:// or --sse): open connections at --open-rate R",
            "--phase does not apply to a gRPC streaming call (--hold): start calls at --rate R",
        ),
        (
            &["--duration", "1s"],
            "--duration does not apply to held connections (ws:// or --sse): hold each connection for --hold D",
            "--duration does not apply to a gRPC streaming call (--hold): start --connections N calls",
        ),
        (
            &["--concurrency", "2"],
            "--concurrency does not apply to held connections (ws:// or --sse): hold --connections N",
            "--concurrency does not apply to a gRPC streaming call (--hold): hold --connections N calls",
        ),
        (
            &["--requests", "2"],
            "--requests does not apply to held connections (ws:// or --sse): hold --connections N",
            "--requests does not apply to a gRPC streaming call (--hold): hold --connections N calls",
        ),
        (
            &["--new-connection"],
            "--new-connection does not apply to held connections (ws:// or --sse): each held connection is its own",
            "--new-connection does not apply to a gRPC streaming call (--hold): each call has its own connection",
        ),
    ];
    for (flag, on_ws, on_grpc) in cases {
        for (base, want) in [(&ws[..], on_ws), (&grpc[..], on_grpc)] {
            let args: Vec<&str> = base.iter().chain(flag).copied().collect();
            let line = refused(&iolab(&args), &[]);
            assert_eq!(line, format!("error: {want}"), "{args:?}");
        }
    }
}
