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

/// The charts beside the table (docs/attack.md shows them from
/// docs/results/c10k): each target's measured line and, dashed, its
/// prediction; the pool's predicted line is flat past its 60 threads, as
/// its measured one is, and the thread-per-request line climbs a thread a
/// connection. The docs' copy is the file `runs::docs::chart` writes.
#[test]
fn r47_12_the_held_charts_draw_the_prediction_beside_the_measurement() {
    let file = load("c10k");
    let charts = iolab_report::runs::charts::charts(&file);
    let ids: Vec<&str> = charts
        .iter()
        .filter(|c| c.id.starts_with("held-"))
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(ids, ["held-rss", "held-threads"]);
    let threads = charts.iter().find(|c| c.id == "held-threads").unwrap();
    // Five targets at three levels, measured and predicted.
    assert_eq!(threads.points, 30, "{}", threads.svg);
    assert!(threads.svg.contains("rust-pool(threads=60) (predicted)"));
    assert!(
        threads
            .svg
            .contains("rust-pool(threads=60) predicted: 60 of 160 held"),
        "{}",
        threads.svg
    );
    let svg = iolab_report::runs::docs::chart(&file, "held-rss").expect("a chart file");
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" "));
    assert!(iolab_report::runs::docs::chart(&file, "nope").is_none());
    let md = iolab_report::runs::docs::held(&file).expect("the docs' table");
    assert!(md[0].starts_with("| target |"), "{}", md[0]);
    assert!(md.iter().any(|l| l.starts_with("- rust-pool(threads=60):")));
}
