//! `iolab capacity --sweep`: the Universal Scalability Law beside the
//! queueing fit, end to end. A preset's built-in target (a pool of 4
//! threads, 50 ms each: X(n) = min(n, 4) / 0.05 s), started by the lab,
//! is searched, swept at 1..6 clients and checked at 12; the document
//! holds the sweep, the fit and the check, its errors are recomputed from
//! its own numbers, and the text states the document's numbers. Bad sweep
//! flags are one line and exit 2, nothing measured.

mod common;

use std::process::Command;

use iolab_report::numbers::{rate, secs};
use serde_json::Value;

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

const PRESET: &str = r#"
name = "usl-pool"
description = "Test: a pool of 4 threads at sleep:50, searched and swept"
[capacity]
slo = "p99<150ms,success>=99%"
start = 20
precision = "10%"
max_step = "2s"
[load]
steps = "sleep:50"
rate = 50
duration = "1s"
timeout = "1s"
[[targets]]
model = "pool"
threads = 4
label = "pool-4"
"#;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn a_sweep_fits_the_usl_and_checks_both_fits_at_twice_n() {
    let dir = tempfile::tempdir().unwrap();
    let preset = dir.path().join("usl.toml");
    std::fs::write(&preset, PRESET).unwrap();
    let out_dir = dir.path().join("out");
    let out = iolab()
        .arg("capacity")
        .arg(&preset)
        .args([
            "--sweep",
            "6",
            "--sweep-step",
            "1s",
            "--json",
            "--quiet",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .unwrap();
    let doc = common::json_ok(&out);
    common::assert_capacity_schema(&doc);
    let s0 = &doc["searches"][0];
    let sweep = &s0["sweep"];
    assert!(
        f(&s0["elapsed_s"]) > 0.0 && f(&sweep["elapsed_s"]) > 0.0,
        "{sweep}"
    );
    // The levels 1..6, each answered.
    let levels = sweep["levels"].as_array().expect("levels");
    let clients: Vec<u64> = levels
        .iter()
        .map(|l| l["concurrency"].as_u64().unwrap())
        .collect();
    assert_eq!(clients, [1, 2, 3, 4, 5, 6], "{sweep}");
    for l in levels {
        assert!(f(&l["throughput_rps"]) > 0.0, "{l}");
        assert!(
            l["usl_rps"].is_number() && l["queueing_rps"].is_number(),
            "{l}"
        );
    }
    // One client of a 50 ms service: about 20/s, whatever the machine.
    let x1 = f(&levels[0]["throughput_rps"]);
    assert!((12.0..=21.0).contains(&x1), "X(1) = {x1}");
    // The fit: each parameter inside its interval, λ near X(1).
    let fit = &sweep["fit"];
    for p in ["sigma", "kappa", "lambda"] {
        let e = &fit[p];
        assert!(
            f(&e["low"]) <= f(&e["value"]) && f(&e["value"]) <= f(&e["high"]),
            "{p}: {e}"
        );
    }
    assert!(
        f(&fit["sigma"]["value"]) >= 0.0 && f(&fit["kappa"]["value"]) >= 0.0,
        "{fit}"
    );
    let lambda = f(&fit["lambda"]["value"]);
    assert!(
        (lambda - x1).abs() / x1 < 0.5,
        "λ {lambda} vs X(1) {x1}: {fit}"
    );
    assert_eq!(fit["levels"], 6);
    // The check at 2N: 12 clients on 4 threads serve about 80/s.
    let t = &sweep["twice"];
    assert_eq!(t["concurrency"], 12, "{t}");
    let m = f(&t["measured"]["throughput_rps"]);
    assert!(m > 40.0 && m < 90.0, "measured at 12 clients: {m}");
    let (u, q) = (f(&t["usl_rps"]), f(&t["queueing_rps"]));
    let (ue, qe) = ((u - m) / m * 100.0, (q - m) / m * 100.0);
    assert!((f(&t["usl_error_pct"]) - ue).abs() < 1e-9, "{t}");
    assert!((f(&t["queueing_error_pct"]) - qe).abs() < 1e-9, "{t}");
    assert!(
        (f(&t["margin_points"]) - (ue.abs() - qe.abs()).abs()).abs() < 1e-9,
        "{t}"
    );
    // The measurement's noise: 2·√ok answers over the level's window.
    let ok = m * f(&t["measured"]["duration_s"]);
    let noise = (200.0 / ok.sqrt()).min(100.0);
    assert!((f(&t["noise_pct"]) - noise).abs() < 1e-9, "{t}");
    let within = ((u + q) / 2.0 - m).abs() <= m * noise / 100.0;
    let closer = if within || (ue.abs() - qe.abs()).abs() < 0.05 {
        "tie"
    } else if ue.abs() < qe.abs() {
        "usl"
    } else {
        "queueing"
    };
    assert_eq!(t["closer"], closer, "{t}");
    // The queueing fit predicts its fitted pool's plateau: c threads held
    // S each serve c / S whatever the clients beyond c.
    let qf = &s0["fit"];
    let c = qf["binding"]["size"]
        .as_f64()
        .unwrap_or_else(|| f(&qf["concurrency"]))
        .round()
        .max(1.0);
    let plateau = c / (f(&qf["service_ms"]) / 1000.0);
    assert!(
        c < 12.0 && (q - plateau).abs() / plateau < 0.1,
        "queueing at 12: {q} vs {c} / S = {plateau}: {qf}"
    );

    // The text states the document's numbers.
    let saved = out_dir.join("capacity.json");
    let text = iolab().args(["report"]).arg(&saved).output().unwrap();
    common::assert_ok(&text);
    let text = String::from_utf8(text.stdout).unwrap();
    let said = format!(
        "at twice N, 12 clients: measured {}/s; the USL predicted {}/s ({ue:+.1}%), the queueing fit {}/s ({qe:+.1}%)",
        rate(m),
        rate(u),
        rate(q)
    );
    assert!(text.contains(&said), "{said}\n{text}");
    let winner = match closer {
        "usl" => "the USL was closer".to_string(),
        "queueing" => "the queueing fit was closer".to_string(),
        _ => "a tie".to_string(),
    };
    assert!(text.contains(&winner), "{winner}\n{text}");
    assert!(
        text.contains(&format!("λ = {}/s (", rate(lambda))),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "sweep: 6 levels of closed-loop clients, 1 to 6, 1.00s each, then 12 clients (in {})",
            secs(f(&sweep["elapsed_s"]))
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("(in {})", secs(f(&s0["elapsed_s"])))),
        "{text}"
    );
    for l in levels {
        let row = format!("{}  1.00s", l["concurrency"]);
        assert!(
            text.contains(&row) && text.contains(&rate(f(&l["throughput_rps"]))),
            "{row}\n{text}"
        );
    }
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(
        html.contains("throughput vs closed-loop clients"),
        "no sweep chart"
    );
}

#[test]
fn bad_sweep_flags_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (vec!["--sweep", "0"], "--sweep: 0 clients"),
        (vec!["--sweep", "1"], "give at least 6"),
        (vec!["--sweep", "5"], "give at least 6"),
        (vec!["--sweep", "5001"], "at most 5,000"),
        (vec!["--sweep", "6", "--sweep-step", "0s"], "--sweep-step"),
        (vec!["--sweep", "6", "--sweep-step", "11m"], "--sweep-step"),
        (vec!["--sweep", "6", "--sweep-step", "soon"], "--sweep-step"),
        (
            vec!["--sweep", "60", "--connections", "100"],
            "raise it or lower --sweep",
        ),
        (vec!["--sweep-step", "1s"], "--sweep"),
    ] {
        let out_dir = dir.path().join("out");
        let out = iolab()
            .args(["capacity", "http://127.0.0.1:1/"])
            .args(&args)
            .arg("--out")
            .arg(&out_dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!out_dir.exists(), "{args:?}: measured");
    }
}
