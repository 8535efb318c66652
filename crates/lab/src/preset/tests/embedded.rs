//! The presets iolab ships: embedded ones load, the test folder parses,
//! and published rows name real runs.

use std::time::Duration;

use iolab_model::experiment::Work;
use iolab_model::{ConnectionMode, ModelKind};

use super::*;

#[test]
fn showdown_is_every_built_in_model_at_four_rates() {
    let p = load_plan("showdown", None).unwrap();
    assert_eq!(p.name, "showdown");
    assert_eq!(p.runs.len(), 24);
    let models: std::collections::BTreeSet<_> = p.runs.iter().map(|r| r.model).collect();
    assert_eq!(models.len(), ModelKind::built_in().count());
    assert_eq!(p.runs[0].name, "sequential-rate=50");
    assert_eq!(p.runs[5].name, "pool-rate=200");
    assert_eq!(p.runs[5].params.threads, Some(20));
    assert_eq!(p.runs[5].coordinates["rate"], 200);
    assert_eq!(p.runs[5].coordinates["model"], "pool");
    assert_eq!(p.scale, 1.0);
    assert_eq!(p.reps, 1);
    let Work::Http(w) = &p.runs[5].work else {
        panic!("http")
    };
    assert_eq!(w.steps.to_string(), "sleep:100");
    assert_eq!(w.timeout, Duration::from_secs(1));
    assert!(matches!(w.connections, ConnectionMode::KeepAlive { .. }));
    assert_eq!(w.driver.duration(), Some(Duration::from_secs(2)));
}

#[test]
fn test_presets_on_disk_parse() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../presets/test");
    let all = list(std::path::Path::new(dir));
    assert!(all.len() >= 3, "{all:?}");
    for p in &all {
        assert!(p.plan.is_ok(), "{}: {:?}", p.name, p.plan);
    }
    // The embedded showdown is listed even when the folder lacks it.
    assert!(all.iter().any(|p| p.name == "showdown"));
}

#[test]
fn every_embedded_preset_loads_and_its_published_rows_name_real_runs() {
    for (name, _) in EMBEDDED {
        let p = load_plan(name, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!p.runs.is_empty(), "{name}");
        let Some(published) = &p.published else {
            continue;
        };
        let rows = published["rows"].as_array().expect("published.rows");
        for row in rows {
            let sel = row["run"].as_object().expect("run selector table");
            let found = p.runs.iter().any(|r| {
                sel.iter().all(|(k, v)| {
                    r.coordinates
                        .get(k)
                        .is_some_and(|c| match (c.as_f64(), v.as_f64()) {
                            (Some(a), Some(b)) => a == b,
                            _ => c == v,
                        })
                })
            });
            assert!(found, "{name}: published row {row} names no run");
        }
    }
}
