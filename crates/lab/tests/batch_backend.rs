//! A batch preset whose IO tasks are real `pg_sleep` calls (`[batch] backend =
//! "pg"`, presets/e3-futures-pg.toml) runs through the lab runner against the
//! PostgreSQL scripts/test exports (IOLAB_PG): every executor, the
//! non-blocking one included, is capped by its pool of connections.

use iolab_lab::preset::{parse_plan, Overrides};
use iolab_lab::{run, RunOptions, Silent};
use iolab_model::runs::Outcome;

#[test]
fn e3_on_postgres_is_capped_by_the_connection_pool() {
    std::env::var("IOLAB_PG").expect("IOLAB_PG: run under scripts/test (a real PostgreSQL)");
    let path = format!(
        "{}/../../presets/e3-futures-pg.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let over = Overrides {
        scale: Some(0.05), // S = 50 ms
        ..Overrides::default()
    };
    let mut plan = parse_plan(&text, "presets/e3-futures-pg.toml", over).unwrap();
    plan.runs.retain(|r| r.name.contains("n=100"));
    assert_eq!(
        plan.runs.len(),
        4,
        "{:?}",
        plan.runs.iter().map(|r| &r.name).collect::<Vec<_>>()
    );
    let tmp = tempfile::tempdir().unwrap();
    let file = run(&plan, &RunOptions::new(tmp.path()), &Silent).unwrap();
    assert!(file.complete);
    let total = |label: &str| {
        let r = file
            .runs
            .iter()
            .find(|r| r.name.starts_with(label))
            .unwrap_or_else(|| panic!("no run {label}"));
        assert_eq!(r.outcome, Outcome::Completed, "{}", r.name);
        let b = r.batch.as_ref().unwrap();
        assert_eq!((b.tasks, b.failed), (100, 0), "{}: {b:?}", r.name);
        assert_eq!(b.params["io"], "pg", "{b:?}");
        b.total_s
    };
    // ceil(100 / 8) = 13 rounds of 50 ms; ten connections: 10 rounds, timers or not.
    let (pool8, async10) = (total("fixed-pool-8"), total("async-pg-pool-10"));
    assert!(pool8 >= 0.6, "pool of 8 on pg: {pool8} s");
    assert!(
        async10 >= 0.47,
        "non-blocking with 10 connections: {async10} s"
    );
    // A hundred connections lift the cap (their first connects cost time, so
    // only "well under ten rounds" is asserted).
    total("global-pool-16");
    let async100 = total("async-pg-pool-100");
    assert!(async100 < async10 * 2.0 + 1.0, "{async100} vs {async10}");
}
