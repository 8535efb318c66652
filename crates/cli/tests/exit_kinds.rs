//! Exit codes come from the error's kind (issue 48): every kind has one
//! code in `crates/cli/src/exit.rs`'s table, the docs' table is that table,
//! and bad input typed by the libraries (a URL, a protocol flag, a shard, a
//! request list, shard documents, a runtime name, a knob) ends the real
//! binary with exit 2 and the same one line it printed before the errors were
//! typed (the lines below were read from main's binary, 0880d98).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use iolab::exit::{code, markdown, EXIT_CODES, EXIT_NOISY};
use iolab_model::ExitKind;

#[test]
fn r48_10_every_kind_has_one_code_and_the_docs_table_is_the_table() {
    for kind in ExitKind::ALL {
        let rows: Vec<u8> = EXIT_CODES
            .iter()
            .filter(|r| r.kind == Some(kind))
            .map(|r| r.code)
            .collect();
        assert_eq!(rows, vec![code(kind)], "{kind:?}: one row, one code");
    }
    let codes: BTreeSet<u8> = EXIT_CODES.iter().map(|r| r.code).collect();
    assert_eq!(codes.len(), EXIT_CODES.len(), "each code once");
    assert_eq!(
        (code(ExitKind::BadInput), code(ExitKind::Failed), EXIT_NOISY),
        (2, 1, 3)
    );
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md");
    let text = std::fs::read_to_string(&page).expect("docs/architecture.md reads");
    let (_, after) = text
        .split_once("<!-- generated from the exit codes table -->")
        .expect("the exit codes table's marker");
    let (table, _) = after.split_once("<!-- end generated -->").expect("its end");
    let made = markdown();
    assert_eq!(
        table.trim(),
        made.trim(),
        "docs/architecture.md's exit codes are not exit.rs's table; paste:\n{made}"
    );
}

/// Bad inputs each library now refuses with a typed error, and the line
/// main's binary printed for each.
const BAD: &[(&[&str], &str)] = &[
    (
        &["attack", "ftp://127.0.0.1:9/", "-r", "1", "-d", "1s"],
        "error: bad URL 'ftp://127.0.0.1:9/': only http://, https://, grpc:// and grpcs:// are supported (use e.g. http://127.0.0.1:8080/)",
    ),
    (
        &["attack", "http://127.0.0.1:0/", "-r", "1", "-d", "1s"],
        "error: bad URL 'http://127.0.0.1:0/': port must be 1-65535 (use e.g. http://127.0.0.1:8080/)",
    ),
    (
        &["attack", "http://127.0.0.1:9/", "-r", "1", "-d", "1s", "--streams", "2"],
        "error: --streams 2 needs HTTP/2: add --http2 (HTTP/1.1 carries one request at a time per connection)",
    ),
    (
        &["attack", "grpc://127.0.0.1:9", "-r", "1", "-d", "1s"],
        "error: grpc://127.0.0.1:9: name the method to call with --call package.Service/Method",
    ),
    (
        &["attack", "http://127.0.0.1:9/", "-r", "1", "-d", "1s", "--call", "a.B/C"],
        "error: --call needs a grpc:// (h2c) or grpcs:// (TLS) URL, not http://127.0.0.1:9/: e.g. grpc://127.0.0.1:50051",
    ),
    (
        &["attack", "grpc://127.0.0.1:9", "-r", "1", "-d", "1s", "--call", "Greeter"],
        "error: --call 'Greeter': give package.Service/Method (e.g. helloworld.Greeter/SayHello)",
    ),
    (
        &["attack", "http://127.0.0.1:9/", "-r", "1", "-d", "1s", "--source-addrs", "0.0.0.0"],
        "error: --source-addrs 0.0.0.0 is no address: name the addresses to connect from (e.g. 127.0.0.2)",
    ),
    (
        &["attack", "http://127.0.0.1:9/", "-r", "1", "-d", "1s", "--source-addrs", "10.1.2.3"],
        "error: --source-addrs 10.1.2.3 cannot reach the loopback target 127.0.0.1:9: use 127.x.y.z addresses (all of 127.0.0.0/8 is this machine)",
    ),
    (
        &["attack", "http://127.0.0.1:9/", "-r", "1", "-d", "1s", "--shard", "1/2", "--connections", "1"],
        "error: the plan has 1 requests, fewer than 2 shards: raise the rate or duration, or use fewer shards",
    ),
    (
        &["attack", "ws://127.0.0.1:9/ws", "--hold", "1s", "--connections", "0"],
        "error: --connections 0: hold between 1 and 50000 connections",
    ),
    (
        &["attack", "http://127.0.0.1:9/", "-r", "1", "-d", "1s", "--slo", "p99"],
        "error: --slo: objective 'p99': a latency clause is pQ<BOUND (write e.g. 'p99<200ms,success>=99.9%')",
    ),
    (
        &["serve", "--model", "pool", "--runtime", "../etc"],
        "error: --runtime: runtime '../etc' is not a runtime name: use rust or a folder under runtimes/ (e.g. jvm, node, python)",
    ),
    (
        &["serve", "--model", "pool", "--runtime", "nosuchruntime"],
        "",
    ),
    (
        &["capacity", "http://127.0.0.1:9/", "--baseline", "/nonexistent.json"],
        "error: --baseline /nonexistent.json: No such file or directory (os error 2)",
    ),
];

#[test]
fn r48_11_bad_input_typed_by_the_libraries_exits_2_with_its_line() {
    for (args, line) in BAD {
        let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
            .args(*args)
            .env(
                "IOLAB_ROOT",
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
            )
            .output()
            .expect("iolab runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        match line.is_empty() {
            // The path in the message is this checkout's.
            true => assert!(err.contains("unknown runtime 'nosuchruntime'"), "{err}"),
            false => assert_eq!(err.trim_end(), *line, "{args:?}"),
        }
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
