//! `--png` file names: one file per chart, even when two run names make the
//! same file-name-safe id (issue 30, finding 14).

use std::collections::HashSet;
use std::path::PathBuf;

use iolab_report::{charts, render_pngs};

#[test]
fn r30_14_runs_whose_names_slug_alike_get_a_png_each() {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spans.json");
    let mut runs = iolab_model::runs::load(&fixture).expect("fixture loads");
    assert_eq!(runs.runs.len(), 2);
    // `_` is not file-name-safe: both names become `p-1`.
    runs.runs[0].name = "p_1".into();
    runs.runs[1].name = "p-1".into();
    let dir = tempfile::tempdir().unwrap();
    let files = render_pngs(&runs, dir.path()).unwrap();
    let made = charts::charts(&runs).len();
    assert_eq!(files.len(), made);
    let distinct: HashSet<&PathBuf> = files.iter().collect();
    assert_eq!(distinct.len(), made, "{files:?}");
    let on_disk = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension() == Some("png".as_ref()))
        .count();
    assert_eq!(on_disk, made, "the count said is the files written");
    // The first run keeps the plain name, the second the next free one.
    for f in [
        "series-p-1",
        "series-p-1-2",
        "timeline-p-1-measured",
        "timeline-p-1-measured-2",
    ] {
        assert!(
            dir.path().join(format!("{f}.png")).is_file(),
            "{f}: {files:?}"
        );
    }
}
