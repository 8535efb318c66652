//! `iolab whatif` end to end at CI size (presets/test/whatif-*.toml: short
//! steps, small rates, a debug build's costs; one process for both pairs):
//! A fitted as a black box must be named by the resource its configuration
//! sets, and each change B predicted from that fit alone must land within
//! 15% of B's measured capacity. The pairs here need only the built-in
//! models; the runtime pairs (`presets/whatif-{jvm-pg-pool,jvm-pool,
//! python-prefork,node-loop-blocking,ruby-sequential}.toml`) need their
//! runtimes installed and are run on a quiet machine (docs/capacity.md).

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// The pairs: threads bind (pool(4) -> loop-async), the CPU binds
/// (pool(8) computing on one core -> loop-async, no gain).
const PAIRS: [&str; 2] = [
    "presets/test/whatif-rust-pool.toml",
    "presets/test/whatif-cpu.toml",
];

/// The largest error a prediction may have, %.
const MAX_ERROR_PCT: f64 = 15.0;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
#[ignore = "not yet within 15% at CI size: the last CI-size runs (2026-11-25, debug build, before B's cost was calibrated and before the search's own threads were kept off the target's core) predicted rust-pool's B -3.9% to +111% and cpu's +38%; the quiet release runs since (docs/capacity.md) hold 15% for the CPU, gunicorn and PostgreSQL pairs, not yet for rust-pool (-19.5%) and the JVM pair. Run: cargo test -p iolab --test whatif -- --ignored"]
fn every_pair_names_a_and_predicts_b_within_15_percent() {
    let presets = PAIRS;
    let out_dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .current_dir(root())
        .arg("whatif")
        .args(presets)
        .args(["--json", "--quiet", "--out"])
        .arg(out_dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["schema"], "iolab.whatif/1");
    // The saved document re-renders as the pair table.
    let table = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .arg("report")
        .arg(out_dir.path().join("whatif.json"))
        .output()
        .unwrap();
    assert!(
        table.status.success(),
        "{}",
        String::from_utf8_lossy(&table.stderr)
    );
    let text = String::from_utf8_lossy(&table.stdout);
    eprintln!("{text}");
    let mut wrong = Vec::new();
    let pairs = doc["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), presets.len());
    for p in pairs {
        let name = p["name"].as_str().unwrap();
        let binding = &p["fitted"]["fit"]["binding"];
        // Whose CPU the fit read: a loaded machine shows as `process`.
        eprintln!(
            "{name}: A's CPU per request from {}",
            p["fitted"]["fit"]["cpu_source"]
        );
        if p["named_right"] != true {
            wrong.push(format!(
                "{name}: A named {} ({}), not {}",
                binding["resource"], binding["sentence"], p["expected"]
            ));
        }
        let changes = p["changes"].as_array().unwrap();
        assert!(!changes.is_empty(), "{name}: no change measured");
        for c in changes {
            let predicted = c["predicted"]["slo_capacity_rps"].as_f64();
            let measured = c["measured"]["capacity_rps"].as_f64();
            let error = c["error_pct"].as_f64();
            // The error is recomputed from the two capacities beside it.
            if let (Some(p), Some(m), Some(e)) = (predicted, measured, error) {
                assert!((e - (p - m) / m * 100.0).abs() < 1e-6, "{name}: {c}");
            }
            // B's cost was calibrated on the lab's copies of A's and B's
            // runtimes, each at least once.
            let k = &c["calibration"];
            assert!(k["a_runtime_ms"].as_f64().is_some(), "{name}: {c}");
            let tried = k["b_runtime"].as_array().unwrap();
            assert!(!tried.is_empty() && tried.len() <= 5, "{name}: {k}");
            match error {
                Some(e) if e.abs() <= MAX_ERROR_PCT => {}
                _ => wrong.push(format!(
                    "{name}: {} predicted {predicted:?} req/s, measured {measured:?} ({})",
                    c["name"], c["measured"]["outcome"]
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_preset_that_is_no_pair_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.toml");
    std::fs::write(
        &one,
        "name = \"one\"\ndescription = \"d\"\n[capacity]\nslo = \"p99<100ms\"\n[load]\nsteps = \"sleep:10\"\nrate = 10\nduration = \"1s\"\n[[targets]]\nmodel = \"pool\"\n[whatif]\nexpect = \"threads\"\n",
    )
    .unwrap();
    let none = dir.path().join("none.toml");
    std::fs::write(
        &none,
        "name = \"none\"\ndescription = \"d\"\n[capacity]\nslo = \"p99<100ms\"\n[load]\nsteps = \"sleep:10\"\nrate = 10\nduration = \"1s\"\n[[targets]]\nmodel = \"pool\"\n[[targets]]\nmodel = \"loop-async\"\n",
    )
    .unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        std::fs::read_to_string(&none).unwrap() + "[whatif]\nexpect = \"gremlins\"\n",
    )
    .unwrap();
    for (file, needle) in [
        (&one, "needs two [[targets]]"),
        (&none, "no [whatif] table"),
        (&bad, "[whatif]"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
            .arg("whatif")
            .arg(file)
            .arg("--out")
            .arg(dir.path().join("out"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{needle}: {err}");
        assert!(!dir.path().join("out").exists());
    }
}
