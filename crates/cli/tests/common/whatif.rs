//! The pair check shared by `tests/whatif_pairs.rs` (the built-in pairs) and
//! `tests/whatif_runtimes.rs` (the runtime pairs), both in the slow tier, and
//! the default tier's smoke (`tests/whatif.rs`): run `iolab whatif` on
//! presets at CI size, in one process, and require of every pair that A is
//! named by the resource its configuration sets and that each B's predicted
//! capacity lands within the goal ([`GOAL_PCT`]) of B's measured
//! capacity, widened by what a CI-size measurement of the same B
//! reproduces within ([`CI_NOISE_PCT`], or [`JVM_CI_NOISE_PCT`] for a pair
//! whose Bs are Spring on one CPU).
//!
//! - B's measured capacity is a bracket: the highest rate that passed twice
//!   and the lowest that failed (at most the search's precision apart). A
//!   prediction is compared with the nearer end of it (inside it, the error
//!   is 0): compared with its bottom alone, a prediction at the true
//!   capacity would read up to the precision high. The document's
//!   `error_pct` stays against the bottom, and the test prints both.
//! - At CI size (steps of 1-2 s, 8% precision, a debug build) one B's
//!   capacity moved between runs on a quiet 2-core machine: the rust loop
//!   375-450/s over 7 runs, the CPU pair's loop 187.5-200, uvicorn 425-450,
//!   EventMachine 380-400. A single run's error against the goal alone
//!   fails by that noise, not by the prediction; the quiet full-size runs
//!   (docs/capacity.md) are held to the goal itself.
//! - A machine whose CPU changes speed under the test moves B by that much:
//!   the lab times the CPU's speed through each pair (`cpu_speed`, its
//!   p90 over its p10), and when it moved more than a pair's noise, that is
//!   the pair's noise (the test prints it).

use std::process::Command;

use serde_json::Value;

/// The goal: B's capacity predicted within this, %.
pub const GOAL_PCT: f64 = 15.0;

/// How far one B's capacity measured at CI size moved between quiet runs, %
/// (the module's header has the runs).
pub const CI_NOISE_PCT: f64 = 10.0;

/// The same for Spring's virtual threads and WebFlux on one CPU at CI size
/// (presets/test/whatif-jvm-pool.toml): since B is warmed by the JVM's own
/// count, quiet runs measured virtual threads at 475-850/s (28% either side
/// of the middle) and WebFlux at 375-850/s (docs/capacity.md). The cost a
/// request was predicted within a few % (s13: 1.80 ms predicted, 1.76-1.80
/// measured at 500/s), but whether a 2 s step at 85-95% of the core meets
/// p99<500ms depends on the JIT's and the collector's pauses in it: after
/// a collapse to 0% answered, one target failed 500/s 0.5 s later and
/// passed it 4 s later. The full-size pairs are held to the goal.
pub const JVM_CI_NOISE_PCT: f64 = 30.0;

/// One pair checked: its preset and the CI noise its Bs are allowed, %.
pub type PairCheck<'a> = (&'a str, f64);

/// How far `predicted` is from the measured bracket `[low, high]`, % of the
/// nearer end (0 inside it; `high` absent when nothing failed).
pub fn bracket_error_pct(predicted: f64, low: f64, high: Option<f64>) -> f64 {
    let high = high.unwrap_or(low).max(low);
    if predicted < low {
        (predicted - low) / low * 100.0
    } else if predicted > high {
        (predicted - high) / high * 100.0
    } else {
        0.0
    }
}

/// Run `iolab whatif` on `presets` in one process: the document on stdout,
/// checked to be one, and the saved `whatif.json` re-rendered as the pair
/// table (printed).
fn run_whatif(presets: &[&str]) -> Value {
    let out_dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .current_dir(super::root())
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
    let table = String::from_utf8_lossy(&table.stdout);
    eprintln!("{table}");
    let pairs = doc["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), presets.len());
    for p in pairs {
        let name = p["name"].as_str().unwrap();
        assert!(
            table.contains(name),
            "{name} missing from the table:\n{table}"
        );
    }
    doc
}

/// The default tier's smoke: one pair runs end to end and its document is
/// whole (A fitted and named, every B predicted, calibrated and measured,
/// each error the one its two capacities give). Not whether B was
/// predicted well: that is [`check_pairs`]'s, in the slow tier.
pub fn smoke(preset: &str) {
    let doc = run_whatif(&[preset]);
    let p = &doc["pairs"][0];
    let name = p["name"].as_str().unwrap();
    assert!(p["named_right"].is_boolean(), "{name}: {p}");
    let binding = &p["fitted"]["fit"]["binding"];
    assert!(binding["resource"].is_string(), "{name}: {binding}");
    assert!(speed_moved_pct(p).is_some(), "{name}: {}", p["cpu_speed"]);
    let changes = p["changes"].as_array().unwrap();
    assert!(!changes.is_empty(), "{name}: no change measured");
    for c in changes {
        let predicted = c["predicted"]["slo_capacity_rps"].as_f64();
        let measured = c["measured"]["capacity_rps"].as_f64();
        assert!(predicted.is_some_and(|r| r > 0.0), "{name}: {c}");
        assert!(measured.is_some_and(|r| r > 0.0), "{name}: {c}");
        check_change_books(name, c);
        eprintln!(
            "{name}: {} predicted {predicted:?}, measured {measured:?}",
            c["name"]
        );
    }
}

/// What every change's record must hold, right or wrong: its error
/// recomputed from the two capacities beside it, and B's cost calibrated
/// on the lab's copies of A's and B's runtimes, each at least once.
fn check_change_books(name: &str, c: &Value) {
    let predicted = c["predicted"]["slo_capacity_rps"].as_f64();
    let low = c["measured"]["capacity_rps"].as_f64();
    if let (Some(p), Some(m), Some(e)) = (predicted, low, c["error_pct"].as_f64()) {
        assert!((e - (p - m) / m * 100.0).abs() < 1e-6, "{name}: {c}");
    }
    let k = &c["calibration"];
    assert!(k["a_runtime_ms"].as_f64().is_some(), "{name}: {c}");
    let tried = k["b_runtime"].as_array().unwrap();
    assert!(!tried.is_empty() && tried.len() <= 5, "{name}: {k}");
}

/// Run the pairs and check every one; the failures are listed together.
pub fn check_pairs(checks: &[PairCheck]) {
    let presets: Vec<&str> = checks.iter().map(|(p, _)| *p).collect();
    let doc = run_whatif(&presets);
    let wrong: Vec<String> = doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(checks)
        .flat_map(|(p, (_, noise))| check_pair(p, *noise))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// How far the CPU's speed moved through the pair, %: its slow tenth's
/// time over its fast tenth's, recomputed from the reading.
fn speed_moved_pct(p: &Value) -> Option<f64> {
    let s = &p["cpu_speed"];
    Some((s["p90_ms"].as_f64()? / s["p10_ms"].as_f64()? - 1.0) * 100.0)
}

/// What is wrong with one pair (nothing when it is right), its Bs allowed
/// `noise` % beyond the goal, or what the CPU's speed moved through it when
/// that is more.
fn check_pair(p: &Value, noise: f64) -> Vec<String> {
    let name = p["name"].as_str().unwrap();
    let mut wrong = Vec::new();
    let moved = speed_moved_pct(p)
        .unwrap_or_else(|| panic!("{name}: no CPU speed read: {}", p["cpu_speed"]));
    eprintln!(
        "{name}: the CPU's speed moved {moved:.0}% ({})",
        p["cpu_speed"]
    );
    let noise = noise.max(moved);
    // Whose CPU the fit read: a loaded machine shows as `process`.
    eprintln!(
        "{name}: A's CPU per request from {}",
        p["fitted"]["fit"]["cpu_source"]
    );
    if p["named_right"] != true {
        let binding = &p["fitted"]["fit"]["binding"];
        wrong.push(format!(
            "{name}: A named {} ({}), not {}",
            binding["resource"], binding["sentence"], p["expected"]
        ));
    }
    let changes = p["changes"].as_array().unwrap();
    assert!(!changes.is_empty(), "{name}: no change measured");
    for c in changes {
        let predicted = c["predicted"]["slo_capacity_rps"].as_f64();
        let measured = &c["measured"];
        let (low, high) = (
            measured["capacity_rps"].as_f64(),
            measured["failed_rps"].as_f64(),
        );
        check_change_books(name, c);
        let error = predicted
            .zip(low)
            .map(|(p, low)| bracket_error_pct(p, low, high));
        let goal = if error.is_some_and(|e| e.abs() <= GOAL_PCT) {
            "within the goal"
        } else {
            "beyond the goal"
        };
        eprintln!(
            "{name}: {} predicted {predicted:?}, measured [{low:?}, {high:?}): {error:?}% from the bracket ({goal}), {}% from its bottom",
            c["name"], c["error_pct"]
        );
        if !error.is_some_and(|e| e.abs() <= GOAL_PCT + noise) {
            wrong.push(format!(
                "{name}: {} predicted {predicted:?} req/s, measured [{low:?}, {high:?}) ({}; allowed {GOAL_PCT}% + {noise:.0}%)",
                c["name"], measured["outcome"]
            ));
        }
    }
    wrong
}

/// The what-if row of capacity search `s` whose change contains `change`:
/// its predicted capacity (a row that cannot say fails `case`).
pub fn predicted(case: &str, s: &Value, change: &str) -> f64 {
    let row = s["what_if"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["change"].as_str().unwrap_or("").contains(change))
        .unwrap_or_else(|| panic!("{case}: no what-if '{change}': {}", s["what_if"]));
    assert!(row["cannot_say"].is_null(), "{case}: {row}");
    row["slo_capacity_rps"]
        .as_f64()
        .unwrap_or_else(|| panic!("{case}: no prediction: {row}"))
}

/// The prediction within 15% of the change measured (the bound for
/// a what-if on a user's own service), printed to be quoted.
pub fn within(case: &str, predicted: f64, measured: f64) {
    eprintln!("{case}: what-if predicted {predicted:.0}/s, measured {measured:.0}/s");
    assert!(
        (predicted - measured).abs() <= 0.15 * measured,
        "{case}: what-if predicted {predicted:.0}/s, the change measured {measured:.0}/s"
    );
}
