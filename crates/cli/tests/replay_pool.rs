//! Issue 53's measured service, end to end on real parts: one port serving
//! three endpoints of known cost, `GET /health` (trivial, half the
//! traffic), `HEAD /work?steps=pg:50` (a 50 ms query on a PostgreSQL pool
//! of 10, 30%) and `GET /work?steps=cpu:300000` (a little CPU, 20%), on the
//! built-in event loop (nothing but the pool makes a request wait). The
//! pool caps the query endpoint at 10 / 50 ms = 200/s, so the mix at
//! 200 / 30% = 667/s. `iolab capacity --replay` must find it within 15%,
//! name the query endpoint as the one that queued and the pool as what it
//! waits on, and its what-if for "a pool of 20" must come within 15% of the
//! same search against the same service with 20 connections.
//!
//! Slow tier (`scripts/test --slow`): two searches of a minute each, and a
//! capacity read on a busy machine moves with it. Needs PostgreSQL
//! (`IOLAB_PG`, exported by `scripts/test`).

#[path = "common/mod.rs"]
mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

/// The three endpoints: method, request target, share of the log.
const MIX: [(&str, &str, f64); 3] = [
    ("GET", "/health", 0.5),
    ("HEAD", "/work?steps=pg:50", 0.3),
    ("GET", "/work?steps=cpu:300000", 0.2),
];

/// The median of 11 single requests to the query endpoint, ms.
fn query_ms(url: &str) -> f64 {
    let host = url.trim_start_matches("http://");
    let mut v: Vec<f64> = (0..11)
        .map(|_| {
            let mut s = TcpStream::connect(host).unwrap();
            let t0 = Instant::now();
            write!(
                s,
                "HEAD {} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n",
                MIX[1].1
            )
            .unwrap();
            let mut out = Vec::new();
            s.read_to_end(&mut out).unwrap();
            assert!(
                out.starts_with(b"HTTP/1.1 200"),
                "{}",
                String::from_utf8_lossy(&out)
            );
            t0.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[5]
}

/// One search of the mix against the event loop with a pool of `pool`:
/// (the truth, the search's document).
fn search(pg: &str, pool: u32, dir: &Path, log: &Path) -> (f64, Value) {
    let pool_s = pool.to_string();
    let s = common::serve(&[
        "--model",
        "loop-async",
        "--workers",
        "1",
        "--cpus",
        "0",
        "--pg",
        pg,
        "--pg-pool",
        &pool_s,
    ]);
    let truth = f64::from(pool) / (query_ms(&s.url) / 1000.0) / MIX[1].2;
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["capacity", "--replay"])
        .arg(log)
        .args(["--base", &s.url, "--slo"])
        .arg("HEAD /work:p99<250ms; *:p99<250ms")
        .args(["--precision", "10%", "--start", "200"])
        .args([
            "--pid",
            &s.child.id().to_string(),
            "--json",
            "--quiet",
            "--out",
        ])
        .arg(dir.join(format!("pool{pool}")))
        .output()
        .unwrap();
    (truth, common::json_ok(&out))
}

#[test]
fn a_pool_bound_endpoint_of_a_mix_is_named_and_its_bigger_pool_checked() {
    let pg = std::env::var("IOLAB_PG").expect("IOLAB_PG: run under scripts/test");
    let dir = tempfile::tempdir().unwrap();
    let log = common::access_log(dir.path(), &MIX);
    let (truth, doc) = search(&pg, 10, dir.path(), &log);
    common::assert_capacity_schema(&doc);
    let s0 = &doc["searches"][0];
    let cap = doc["capacity_rps"].as_f64().expect("a capacity");
    eprintln!(
        "pool 10: capacity {cap:.0}/s, truth {truth:.0}/s; {}",
        s0["outcome"]
    );
    assert!(
        (cap - truth).abs() / truth <= 0.15,
        "capacity {cap} vs {truth:.0}"
    );
    // The query endpoint queued alone, on the pool's 10 connections.
    let split = &s0["endpoint_split"];
    assert_eq!(split["shared"], false, "{split}");
    let eps = split["endpoints"].as_array().unwrap();
    let query = eps.iter().find(|e| e["method"] == "HEAD").unwrap();
    assert_eq!(query["waits_on"]["resource"], "pool", "{split}");
    assert_eq!(query["waits_on"]["size"], 10.0, "{split}");
    let pg_port = pg.rsplit(':').next().unwrap().split('/').next().unwrap();
    assert!(
        query["waits_on"]["name"]
            .as_str()
            .unwrap()
            .ends_with(pg_port),
        "{split}"
    );
    for e in eps.iter().filter(|e| e["method"] != "HEAD") {
        assert!(e.get("waits_on").is_none(), "{e}");
    }
    assert_eq!(s0["fails_first"]["method"], "HEAD", "{}", s0["fails_first"]);
    // The whole mix: the pool, and what twice the pool buys, checked.
    assert_eq!(
        s0["fit"]["binding"]["resource"], "pool",
        "{}",
        s0["fit"]["binding"]["sentence"]
    );
    let predicted = s0["what_if"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["change"] == "a pool of 20")
        .and_then(|w| {
            w["slo_capacity_rps"]
                .as_f64()
                .or(w["capacity_rps"].as_f64())
        })
        .expect("a what-if for a pool of 20");
    let (truth20, doc20) = search(&pg, 20, dir.path(), &log);
    let measured = doc20["capacity_rps"].as_f64().expect("a capacity at 20");
    let err = (predicted - measured) / measured;
    eprintln!(
        "pool 20: predicted {predicted:.0}/s, measured {measured:.0}/s ({:+.1}%), truth {truth20:.0}/s",
        err * 100.0
    );
    assert!(
        err.abs() <= 0.15,
        "predicted {predicted} vs measured {measured}"
    );
}
