//! The cost of a held connection on a real run's results (fixture
//! `c10k.json`: presets/test/c10k.toml on real servers); its table and
//! Markdown snapshots are with the other fixtures' in `render`.

use std::path::PathBuf;

use iolab_model::runs::RunsFile;
use iolab_report::runs::held;

fn load(name: &str) -> RunsFile {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/{name}.json"));
    iolab_model::runs::load(&path).expect("fixture loads as iolab.runs/1")
}

/// The cost of a held connection (fixture: presets/test/c10k.toml on real
/// servers): the pool stopped at its 60 threads, as predicted; a thread per
/// connection is one thread per connection, beside predict's 1; a loop's
/// threads did not grow.
#[test]
fn the_held_table_sets_the_measurement_beside_the_prediction() {
    let file = load("c10k");
    let g = held::render::grid(&file).expect("a held section");
    let row = |label: &str| g.rows.iter().find(|r| r[0] == label).unwrap().clone();
    let pool = row("rust-pool(threads=60)");
    assert_eq!(pool[1], "40/40 60/100 60/160");
    assert_eq!((pool[9].as_str(), pool[10].as_str()), ("60", "60"));
    let tpr = row("rust-thread-per-request");
    assert_eq!((tpr[4].as_str(), tpr[5].as_str()), ("1", "1"));
    assert_eq!(tpr[9], "> 160");
    let la = row("rust-loop-async");
    assert_eq!((la[4].as_str(), la[5].as_str()), ("0", "0"));
    let c = held::costs(&file);
    let s = held::render::sentence(&c[1]);
    assert!(
        s.contains("it stopped at 60; predicted to stop at 60 (60 threads"),
        "{s}"
    );
}
