//! `iolab attack --replay FILE --base URL` end to end: the real binary,
//! real sockets. nginx writes the access log a replay then sends back in
//! its shares; the HAR fixture is replayed at its recorded times to a
//! server that keeps what it was sent (only to `--base`, no credentials,
//! no writes); shards of a replay merge per endpoint exactly; bad input
//! exits 2 in one line; `iolab capacity --replay` finds a three-endpoint
//! mix's capacity and the endpoint that fails first (capacity.rs).

mod bad_input;
mod capacity;
#[path = "../common/mod.rs"]
mod common;
mod servers;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_ok, json_ok};
use serde_json::Value;

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

fn har() -> PathBuf {
    common::root().join("crates/loadgen/tests/fixtures/replay/shop.har")
}

/// `(method template, sent, ok)` of each endpoint, in the document's order.
fn endpoints(doc: &Value) -> Vec<(String, u64, u64)> {
    let eps = doc["endpoints"].as_array().expect("an endpoints section");
    eps.iter()
        .map(|e| {
            (
                format!(
                    "{} {}",
                    e["method"].as_str().unwrap(),
                    e["template"].as_str().unwrap()
                ),
                e["sent"].as_u64().unwrap(),
                e["ok"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// The run's document matches the committed schema.
fn assert_attack_schema(doc: &Value) {
    let schema: Value =
        serde_json::from_str(include_str!("../../../../schema/attack.schema.json")).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn nginx_writes_a_log_that_a_replay_sends_back_in_its_shares() {
    let Some(nginx) = servers::Nginx::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let u = &nginx.url;
    let copy = nginx_log(&nginx, work.path());

    // Replayed at the recorded times (4x), from the log's own folder, to a
    // server of ours: the writes skipped in one line, the rest as recorded.
    let target = servers::recording();
    let out = iolab()
        .current_dir(work.path())
        .args([
            "attack",
            "--replay",
            "access.log",
            "--base",
            &target.url,
            "--speed",
            "4x",
            "--json",
        ])
        .output()
        .unwrap();
    let doc = json_ok(&out);
    assert_attack_schema(&doc);
    let note = stderr(&out);
    assert!(
        note.contains("skipped 10 POST requests") && note.contains("--allow-writes"),
        "{note}"
    );
    assert_eq!(
        endpoints(&doc),
        [
            ("GET /api/orders/{id}".into(), 20, 20),
            ("GET /health".into(), 10, 10)
        ]
    );
    let share = doc["endpoints"][0]["share"].as_f64().unwrap();
    assert!((share - 2.0 / 3.0).abs() < 1e-9, "{share}");
    assert!(
        doc["endpoints"][0]["recorded_service_ms"].is_number(),
        "nginx's $request_time is read"
    );
    assert_eq!(target.heads.lock().unwrap().len(), 30);

    at_rate_to_nginx(&copy, u);
}

#[test]
fn the_har_fixture_goes_only_to_base_without_credentials_or_writes() {
    let target = servers::recording();
    let elsewhere = tempfile::tempdir().unwrap();
    let out = iolab()
        .current_dir(elsewhere.path())
        .args(["attack", "--replay"])
        .arg(har())
        .args(["--base", &target.url, "--speed", "2x", "--json"])
        .output()
        .unwrap();
    let doc = json_ok(&out);
    assert_eq!(
        endpoints(&doc),
        [
            ("GET /api/products/{id}".into(), 5, 5),
            ("GET /api/cart".into(), 3, 3),
            ("GET /static/app.js".into(), 1, 1)
        ]
    );
    let note = stderr(&out);
    assert!(
        note.contains("skipped 1 POST") && note.contains("cookie x9"),
        "{note}"
    );
    let heads = target.heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 9);
    let host = target
        .url
        .trim_start_matches("http://")
        .to_ascii_lowercase();
    for h in &heads {
        let lower = h.to_ascii_lowercase();
        assert!(
            !lower.contains("cookie") && !lower.contains("authorization"),
            "{h}"
        );
        assert!(
            !lower.contains("shop.example.com") && lower.contains(&format!("host: {host}")),
            "{h}"
        );
        assert!(
            lower.starts_with("get /api/") || lower.starts_with("get /static/"),
            "{h}"
        );
    }
    assert!(
        heads[0].starts_with("GET /api/products/101 "),
        "recorded order: {}",
        heads[0]
    );
    // --keep-auth names what to keep, --allow-writes sends the POST and its body.
    let out = iolab()
        .args(["attack", "--replay"])
        .arg(har())
        .args([
            "--base",
            &target.url,
            "--speed",
            "4x",
            "--keep-auth",
            "Authorization",
            "--allow-writes",
            "--json",
        ])
        .output()
        .unwrap();
    let doc = json_ok(&out);
    assert_eq!(doc["requests"]["ok"], 10);
    let heads = target.heads.lock().unwrap().clone();
    let post = heads
        .iter()
        .find(|h| h.starts_with("POST /api/cart "))
        .expect("the POST");
    assert!(
        post.contains("authorization: Bearer secret-token") && !post.contains("cookie"),
        "{post}"
    );
}

#[test]
fn shards_of_a_replay_merge_per_endpoint_exactly() {
    let target = servers::recording();
    let dir = tempfile::tempdir().unwrap();
    // One absolute start for both (a `+2s` each would read its own clock:
    // two plans).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let at = format!("{:.3}", now.as_secs_f64() + 2.0);
    let children: Vec<_> = (1..=2)
        .map(|i| {
            iolab()
                .args(["attack", "--replay"])
                .arg(har())
                .args([
                    "--base",
                    &target.url,
                    "--rate",
                    "200",
                    "-d",
                    "1s",
                    "--quiet",
                ])
                .args(["--shard", &format!("{i}/2"), "--start-at", &at])
                .arg("--out")
                .arg(dir.path().join(format!("s{i}.json")))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let read = |p: &Path| -> Value { serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap() };
    let shards: Vec<Value> = (1..=2)
        .map(|i| read(&dir.path().join(format!("s{i}.json"))))
        .collect();
    let merged = json_ok(
        &iolab()
            .arg("merge")
            .arg(dir.path())
            .arg("--json")
            .output()
            .unwrap(),
    );
    assert_attack_schema(&merged);
    let (a, b, m) = (
        endpoints(&shards[0]),
        endpoints(&shards[1]),
        endpoints(&merged),
    );
    assert_eq!(m.len(), 3);
    for i in 0..3 {
        assert_eq!(m[i].1, a[i].1 + b[i].1, "{}", m[i].0);
        assert_eq!(m[i].2, a[i].2 + b[i].2, "{}", m[i].0);
    }
    let sent: u64 = m.iter().map(|e| e.1).sum();
    assert_eq!(sent, merged["requests"]["sent"].as_u64().unwrap());
    assert!(merged["endpoints"][0]["histogram"].is_string());
}

/// Traffic to nginx, a vegeta list sent in turn (10 of each of four
/// requests), and nginx's access log of it copied to `work`.
fn nginx_log(nginx: &servers::Nginx, work: &Path) -> PathBuf {
    let u = &nginx.url;
    let list = format!(
        "GET {u}/api/orders/1\n\nGET {u}/api/orders/22\n\nGET {u}/health\n\nPOST {u}/api/orders\n"
    );
    std::fs::write(work.join("t.txt"), list).unwrap();
    let out = iolab()
        .current_dir(work)
        .args([
            "attack",
            "--targets",
            "t.txt",
            "--rate",
            "40",
            "-d",
            "1s",
            "--threads",
            "1",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert_ok(&out);
    let log = std::fs::read_to_string(nginx.log()).unwrap();
    assert_eq!(log.lines().count(), 40, "{log}");
    let copy = work.join("access.log");
    std::fs::write(&copy, &log).unwrap();
    copy
}

/// The log replayed at `--rate` as a Poisson stream with the recorded
/// shares, writes allowed, back to nginx itself: the text report has a row
/// per endpoint, and the counts follow the shares.
fn at_rate_to_nginx(copy: &Path, u: &str) {
    let out = iolab()
        .args(["attack", "--replay"])
        .arg(copy)
        .args(["--base", u, "--allow-writes", "--rate", "300", "-d", "1s"])
        .output()
        .unwrap();
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for row in [
        "Endpoints",
        "GET /api/orders/{id}",
        "GET /health",
        "POST /api/orders",
    ] {
        assert!(text.contains(row), "{row}: {text}");
    }
    let out = iolab()
        .args(["attack", "--replay"])
        .arg(copy)
        .args([
            "--base",
            u,
            "--allow-writes",
            "--rate",
            "300",
            "-d",
            "2s",
            "--json",
        ])
        .output()
        .unwrap();
    let doc = json_ok(&out);
    let eps = endpoints(&doc);
    let sent: u64 = eps.iter().map(|e| e.1).sum();
    assert_eq!(sent, doc["requests"]["sent"].as_u64().unwrap());
    for (name, n, ok) in &eps {
        assert_eq!(n, ok, "{name}");
        let share = match name.as_str() {
            "GET /api/orders/{id}" => 0.5,
            _ => 0.25,
        };
        let got = *n as f64 / sent as f64;
        assert!(
            (got - share).abs() < 0.01,
            "{name}: {got} of {sent}, recorded {share}"
        );
    }
}
