//! The cost of a held connection end to end (presets/test/c10k.toml): every
//! built-in model with `/ws` holds 40, 100 and 160 WebSockets on real
//! servers, 20 messages a second each; the pool has 60 threads. The results
//! keep every connection and message accounted for, the pool stops at its
//! threads as predicted, a thread per connection shows as one thread per
//! connection and a loop's threads do not grow, and the report's section
//! draws the measurement beside `predict`'s numbers.

use std::process::Command;

use assert_cmd::prelude::*;
use iolab_model::runs::{Outcome, RunsFile};
use iolab_report::runs::held;

#[test]
fn the_cost_of_a_held_connection_is_measured_beside_its_prediction() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    let preset = format!(
        "{}/../../presets/test/c10k.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["run", &preset, "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(out.join("runs.json")).unwrap();
    let file: RunsFile = serde_json::from_str(&text).unwrap();
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
    let costs = held::costs(&file);
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
            assert_eq!(l.established, want, "{} at {}", c.label, l.asked);
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
    assert!(
        tpr.kib.unwrap().cost().is_some_and(|k| k >= 4.0),
        "{:?}",
        tpr.kib
    );
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
