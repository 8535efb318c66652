//! The cost of a held connection end to end (presets/test/c10k.toml): every
//! built-in model with `/ws` holds 40, 100 and 160 WebSockets on real
//! servers, 20 messages a second each; the pool has 60 threads. The results
//! keep every connection and message accounted for, the pool stops at its
//! threads as predicted, a thread per connection shows as one thread per
//! connection and a loop's threads do not grow, and the report's section
//! draws the measurement beside `predict`'s numbers.

mod common;

use std::process::Command;

use iolab_model::runs::Outcome;
use iolab_report::runs::held;

#[test]
fn the_cost_of_a_held_connection_is_measured_beside_its_prediction() {
    let run = common::run_test_preset("c10k");
    let (out, file) = (&run.out, &run.file);
    assert_eq!(file.runs.len(), 15);
    for r in &file.runs {
        assert_eq!(r.outcome, Outcome::Completed, "{}", r.name);
        let a = r.attack.as_ref().expect("measured");
        let (c, m) = (
            a.connections.as_ref().unwrap(),
            a.messages.as_ref().unwrap(),
        );
        assert_eq!(c.check(), Ok(()), "{}", r.name);
        assert_eq!(m.check(), Ok(()), "{}", r.name);
        assert!(m.answered > 0, "{}: no echo", r.name);
        assert!(
            r.prediction.as_ref().is_some_and(|p| p.held.is_some()),
            "{}",
            r.name
        );
    }
    let costs = held::costs(file);
    let labels: Vec<&str> = costs.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "rust-thread-per-request",
            "rust-pool(threads=60)",
            "rust-loop-blocking",
            "rust-loop-offload",
            "rust-loop-async"
        ]
    );
    for c in &costs {
        assert_eq!(c.levels.len(), 3, "{}", c.label);
        let pool = c.label.starts_with("rust-pool");
        for l in &c.levels {
            let want = if pool { l.asked.min(60) } else { l.asked };
            let a = file.runs[l.run].attack.as_ref().unwrap();
            let failed = &a.connections.as_ref().unwrap().failed;
            assert_eq!(
                l.established, want,
                "{} at {}: {failed:?}",
                c.label, l.asked
            );
            assert!(
                l.rss_mb.is_some() && l.threads.is_some(),
                "{}: no plateau",
                c.label
            );
        }
    }
    // The pool holds its 60 threads' worth, as predicted; the rest timed out.
    let pool = &costs[1];
    assert_eq!(
        (pool.stopped_at, pool.predicted_stop.0),
        (Some(60), Some(60))
    );
    let top = pool.levels.last().unwrap();
    let a = file.runs[top.run].attack.as_ref().unwrap();
    let failed = &a.connections.as_ref().unwrap().failed;
    assert_eq!(failed.get("handshake_timeout"), Some(&100), "{failed:?}");
    // A thread per held connection; none on a loop.
    let tpr = &costs[0];
    let t = tpr.threads.unwrap().cost().expect("a line");
    assert!(
        (t - 1.0).abs() < 0.1,
        "thread-per-request: {t} threads each"
    );
    // At least a page of stack each (the line itself is noisy at 160 on a
    // shared machine: r² 0.86 to 1 across runs).
    assert!(tpr.kib.unwrap().per >= 4.0, "{:?}", tpr.kib);
    let la = &costs[4];
    let t = la.threads.unwrap().per;
    assert!(t.abs() < 0.05, "loop-async: {t} threads each");
    assert_eq!(la.predicted.as_ref().unwrap().threads_per_connection, 0.0);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("### The cost of a held connection"),
        "{report}"
    );
    for c in &costs {
        assert!(report.contains(&held::render::sentence(c)), "{}", c.label);
    }
}

/// `iolab predict c10k` before running: each model's threads and KiB per
/// held connection and what it holds, recomputed here from the stated
/// assumption (crates/model/src/concurrency/held.rs) by hand.
#[test]
fn predict_says_what_a_held_connection_costs_each_model() {
    use iolab_model::concurrency::held::{CONN_STATE_KIB, STACK_TOUCHED_KIB, WS_READ_BUFFER};
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["predict", "c10k", "--json", "--cores", "2"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 15);
    let buffers = WS_READ_BUFFER as f64 / 1024.0 + CONN_STATE_KIB;
    for r in runs {
        let (model, h) = (r["model"].as_str().unwrap(), &r["held"]);
        let asked = h["connections"].as_u64().unwrap();
        let on_thread = matches!(model, "thread-per-request" | "pool");
        // A pool of Tomcat's 200 threads holds 200; the others hold all.
        let held = if model == "pool" {
            asked.min(200)
        } else {
            asked
        };
        let kib = buffers + if on_thread { STACK_TOUCHED_KIB } else { 0.0 };
        assert_eq!(h["held"].as_u64(), Some(held), "{}", r["name"]);
        assert_eq!(h["kib_per_connection"].as_f64(), Some(kib), "{}", r["name"]);
        let threads = if on_thread { 1.0 } else { 0.0 };
        assert_eq!(
            h["threads_per_connection"].as_f64(),
            Some(threads),
            "{}",
            r["name"]
        );
        assert_eq!(r["ok"].as_u64(), Some(held));
        // Past the pool's threads every handshake times out: in its queue,
        // in the backlog, or dropped by the kernel past both (r52_13).
        let timed_out = r["errors"]["timeout"].as_u64().unwrap_or(0);
        assert_eq!(timed_out, asked - held, "{}", r["name"]);
        assert!(r["errors"].get("reset").is_none(), "{}", r["name"]);
        let mib = (held as f64 * kib / 1024.0).round();
        let text = r["explanation"].as_str().unwrap();
        assert!(text.contains(&format!("about {mib} MiB")), "{text}");
    }
}
