//! `iolab attack grpc://... --call M --hold D` on a streaming method, end
//! to end: the real binary against grpcio (`grpc_server.py`, not ours) on
//! 127.0.0.1; the document's `connections` and `messages` sections and
//! their identities; the text's words; each misuse one `error:` line,
//! exit 2, before any load.

#[path = "../../loadgen/tests/common/grpcio.rs"]
mod grpcio;

use std::process::{Command, Output};

use grpcio::Grpcio;
use iolab_model::attack::AttackResult;

fn iolab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .output()
        .expect("iolab runs")
}

fn document(out: &Output) -> AttackResult {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: AttackResult =
        serde_json::from_slice(&out.stdout).expect("one iolab.attack/1 document");
    doc.check_accounting().expect("identities hold");
    doc
}

/// `n` calls of `method` started at 20/s, each held `hold`.
fn calls(url: &str, method: &str, n: &str, hold: &str, more: &[&str]) -> Output {
    let m = format!("iolab.test.Greeter/{method}");
    let mut args = vec![
        "attack",
        url,
        "--call",
        &m,
        "--connections",
        n,
        "--rate",
        "20",
        "--hold",
        hold,
    ];
    args.extend_from_slice(more);
    iolab(&args)
}

#[test]
fn a_server_streaming_call_counts_its_messages_in_the_held_sections() {
    let Some(s) = Grpcio::start(&["--workers", "16"]) else {
        return;
    };
    let data = r#"{"count":10,"every_ms":20}"#;
    let out = calls(&s.url(), "Ticks", "3", "5s", &["--data", data, "--json"]);
    let doc = document(&out);
    let (c, m) = (doc.connections.unwrap(), doc.messages.unwrap());
    assert_eq!(c.closed_by_server.get("grpc_status:OK"), Some(&3), "{c:?}");
    assert_eq!((m.sent, m.answered, m.lost), (30, 30, 0), "{m:?}");
    assert_eq!(
        (m.latency_from.as_str(), doc.driver.rate),
        ("push", Some(20.0))
    );
    // The text says calls, and where their latency comes from.
    let out = calls(&s.url(), "Ticks", "2", "5s", &["--data", data]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("2 calls held 5.00s each, started at 20/s"),
        "{text}"
    );
    assert!(text.contains("grpc_status:OK:2"), "{text}");
}

#[test]
fn a_bidirectional_call_times_each_echo_and_holds_for_its_hold() {
    let Some(s) = Grpcio::start(&["--workers", "16"]) else {
        return;
    };
    let more = [
        "--data",
        r#"{"text":"hi"}"#,
        "--message-rate",
        "10/s",
        "-H",
        "x-tenant: a",
        "--json",
    ];
    let doc = document(&calls(&s.url(), "Echo", "3", "1s", &more));
    let (c, m) = (doc.connections.unwrap(), doc.messages.unwrap());
    assert_eq!(c.held, 3, "{c:?}");
    assert!(
        m.sent >= 3 * 10 && m.answered == m.sent && m.lost == 0,
        "{m:?}"
    );
    assert_eq!(
        (m.latency_from.as_str(), m.rate_per_connection),
        ("echo", Some(10.0))
    );
}

#[test]
fn each_misuse_of_a_streaming_call_is_one_line_and_exit_2() {
    let Some(s) = Grpcio::start(&[]) else { return };
    let url = s.url();
    let cases: [(&[&str], &[&str]); 7] = [
        (
            &[
                "attack",
                &url,
                "--call",
                "iolab.test.Greeter/Echo",
                "--hold",
                "1s",
                "--connections",
                "1",
                "-H",
                "x-tenant",
            ],
            &["-H", "no ':'"],
        ),
        (
            &[
                "attack",
                &url,
                "--call",
                "iolab.test.Greeter/Ticks",
                "--rate",
                "5",
                "-d",
                "1s",
            ],
            &["server-streaming", "--hold"],
        ),
        (
            &[
                "attack",
                &url,
                "--call",
                "iolab.test.Greeter/SayHello",
                "--hold",
                "1s",
                "--connections",
                "1",
            ],
            &["unary", "drop --hold"],
        ),
        (
            &[
                "attack",
                &url,
                "--call",
                "iolab.test.Greeter/Ticks",
                "--hold",
                "1s",
                "--connections",
                "1",
                "--message-rate",
                "2",
            ],
            &["--message-rate", "server-streaming"],
        ),
        (
            &[
                "attack",
                &url,
                "--call",
                "iolab.test.Greeter/Echo",
                "--hold",
                "1s",
                "--connections",
                "1",
                "--open-rate",
                "2",
            ],
            &["--open-rate", "--rate R"],
        ),
        (
            &[
                "attack",
                &url,
                "--call",
                "iolab.test.Greeter/Echo",
                "--hold",
                "1s",
                "--connections",
                "1",
                "--message",
                "x",
            ],
            &["--message", "--data"],
        ),
        (
            &["attack", &url, "--hold", "1s", "--connections", "1"],
            &["--call"],
        ),
    ];
    for (args, words) in cases {
        let out = iolab(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(words.iter().all(|w| err.contains(w)), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
