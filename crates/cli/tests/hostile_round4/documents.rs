//! Documents read back, `k8s` flags, outside text and `--scale`: refused in one line.

use super::*;
use crate::merge::shards;

/// Issue 49 finding 19: documents read back were not held to what a run can
/// produce: a `--baseline` of capacity 0 passed ("inf% above"), -50 printed
/// as 0, 1e308 as 18,446,744,073,709,551,615/s; an attack with a negative
/// `elapsed_s` or a p50 above its max rendered ("Duration -5000.00ms").
#[test]
fn r38_19_documents_with_impossible_figures_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let url = "http://127.0.0.1:1/work?steps=sleep:50";
    let slo = "p99<200ms";
    for capacity in [0.0, -50.0, 1e308] {
        let doc = serde_json::json!({
            "schema": "iolab.capacity/1", "name": "capacity", "capacity_rps": capacity,
            "slo": {"clauses": [{"kind": "latency", "percentile": 99.0, "below_ms": 200.0}]},
            "searches": [{
                "name": "url", "target": url, "step_rule": "", "steps": [],
                "capacity_rps": capacity, "failed_rps": 110.0, "bracket_width_pct": 10.0,
                "outcome": "converged", "elapsed_s": 1.0
            }],
            "started_utc": "2026-11-24T00:00:00Z"
        });
        let path = dir.path().join("baseline.json");
        std::fs::write(&path, doc.to_string()).unwrap();
        let report = iolab().arg("report").arg(&path).output().unwrap();
        refused(&report, "a capacity is a rate above 0");
        let out = iolab()
            .args(["capacity", url, "--slo", slo, "--baseline"])
            .arg(&path)
            .arg("--out")
            .arg(dir.path().join("out"))
            .output()
            .unwrap();
        refused(&out, "holds a figure no search finds");
        assert!(!dir.path().join("out").exists(), "measured");
    }
    let tmp = tempfile::tempdir().unwrap();
    let shard = &shards().1[0];
    for (field, value, needle) in [
        ("elapsed_s", -5.0, "elapsed_s is -5"),
        ("p50", 1e6, "latency_ms.p50 is 1000000"),
    ] {
        let mut doc = shard.clone();
        match field {
            "p50" => doc["latency_ms"]["p50"] = value.into(),
            f => doc[f] = value.into(),
        }
        let path = tmp.path().join("attack.json");
        std::fs::write(&path, doc.to_string()).unwrap();
        let out = iolab().arg("report").arg(&path).output().unwrap();
        refused(&out, needle);
    }
}

/// Issue 49 findings 22 and 12: `k8s --cpu banana`, `--storage banana`,
/// `--namespace 'Not Valid!'` and `--image ''` wrote manifests kubectl
/// refuses later; `--name $'x\nkind: Secret'` was a two-line error.
#[test]
fn r38_22_k8s_flags_are_checked_as_kubernetes_does() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("job.yaml");
    let k8s = |flags: &[&str]| {
        iolab()
            .args(["k8s", "--shards", "2", "-o"])
            .arg(&out_file)
            .args(flags)
            .args(["--", "http://svc:8080/", "--rate", "10", "-d", "5s"])
            .output()
            .unwrap()
    };
    for (flags, needle) in [
        (
            &["--cpu", "banana", "--image", "r/i:1"][..],
            "--cpu 'banana': a CPU quantity",
        ),
        (
            &["--storage", "banana", "--image", "r/i:1"][..],
            "--storage 'banana': a size",
        ),
        (
            &["--namespace", "Not Valid!", "--image", "r/i:1"][..],
            "--namespace 'Not Valid!'",
        ),
        (&["--image", ""][..], "--image '': give the image"),
        (
            &["--name", "x\nkind: Secret", "--image", "r/i:1"][..],
            "--name 'x\\nkind: Secret'",
        ),
    ] {
        refused(&k8s(flags), needle);
        assert!(!out_file.exists(), "{flags:?}: a manifest was written");
    }
    common::assert_ok(&k8s(&[
        "--cpu",
        "500m",
        "--namespace",
        "load-test",
        "--image",
        "r/i:1",
    ]));
    assert!(out_file.is_file());
}

/// Issue 49 finding 12: a document's `target` holding clear-screen and bell
/// was printed raw by `report`, and the control bytes of `--slo` echoed.
#[test]
fn r38_12_outside_text_reaches_the_terminal_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let mut doc = shards().1[0].clone();
    doc["target"] = "http://127.0.0.1:1/\u{1b}[2J\u{7}".into();
    let path = tmp.path().join("attack.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let out = iolab().arg("report").arg(&path).output().unwrap();
    common::assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
    assert!(text.contains("\\u{1b}[2J"), "{text}");
    let out = iolab()
        .args(["attack", "http://127.0.0.1:1/", "--rate", "1", "-d", "1s"])
        .args(["--slo", "p99<\u{1b}[2J\nsecond line\u{7}"])
        .output()
        .unwrap();
    refused(&out, "objective 'p99<\\u{1b}[2J\\nsecond line\\u{7}'");
    let capacity = serde_json::json!({
        "schema": "iolab.capacity/1", "name": "capacity", "capacity_rps": 100.0,
        "slo": {"clauses": [{"kind": "latency", "percentile": 99.0, "below_ms": 200.0}]},
        "searches": [{
            "name": "url", "target": "http://x/\u{1b}[2J\u{7}", "step_rule": "", "steps": [],
            "capacity_rps": 100.0, "failed_rps": 110.0, "bracket_width_pct": 10.0,
            "outcome": "converged", "elapsed_s": 1.0
        }],
        "started_utc": "2026-11-24T00:00:00Z"
    });
    std::fs::write(&path, capacity.to_string()).unwrap();
    let out = iolab().arg("report").arg(&path).output().unwrap();
    common::assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains('\u{1b}') && text.contains("\\u{1b}[2J"),
        "{text}"
    );
}

/// Issue 49 finding 21: `whatif whatif-cpu --scale 1e-300` blamed the
/// preset's `load.rate` (a 300-digit rate) for the flag the user typed.
#[test]
fn r38_21_a_scale_too_small_is_blamed_on_the_flag() {
    for cmd in [
        &["whatif", "presets/whatif-cpu.toml"][..],
        &["run", "presets/test/tiny.toml", "--dry-run"][..],
    ] {
        let out = iolab()
            .current_dir(common::root())
            .args(cmd)
            .args(["--scale", "1e-300"])
            .output()
            .unwrap();
        refused(
            &out,
            "--scale 1e-300 makes load.rate above the most iolab sends",
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.len() < 200 && !err.contains("toml:"), "{err}");
    }
}
