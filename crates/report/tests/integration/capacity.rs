//! The capacity report's sentences on a saved search (`fixtures/capacity-pool.json`:
//! a pool of 20 threads at 100 ms, its what-ifs): every figure they state
//! recomputed from the document.

use std::path::PathBuf;

use iolab_model::capacity::CapacityFile;
use iolab_report::capacity::{extrapolated, text};
use iolab_report::numbers::{num, rate};

fn fixture() -> CapacityFile {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/capacity-pool.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn predictions_beyond_twice_the_capacity_are_named_extrapolations_with_their_factor() {
    let doc = fixture();
    let s = &doc.searches[0];
    let cap = s.capacity_rps.unwrap();
    let line = extrapolated(s).expect("the fixture predicts far above 206/s");
    // Every change above 2x the capacity is named with its factor; the
    // others (as fitted, twice the threads: 416 of 206) are not.
    for w in s.what_if.iter().filter(|w| !w.fitted) {
        let p = w.slo_capacity_rps.unwrap();
        let named = format!("{} {}/s ({}x)", w.change, rate(p), num(p / cap, 1));
        assert_eq!(line.contains(&named), p > 2.0 * cap, "{named}: {line}");
    }
    assert!(
        line.contains(&format!(
            "the highest rate measured to pass ({}/s)",
            rate(cap)
        )),
        "{line}"
    );
    assert!(text(&doc).contains(&line));
}

#[test]
fn the_fitted_cpu_says_how_it_was_read_in_the_models_words() {
    // "(median ... over steps: one rate)" was said of a median read over
    // five rates whose slope fell: the method's phrase is the model's own.
    let doc = fixture();
    let f = doc.searches[0].fit.as_ref().unwrap();
    let phrase = f.cpu_method.unwrap().phrase();
    // Written before the CPU's source was recorded: the method alone.
    assert_eq!(f.cpu_source, None);
    assert!(
        text(&doc).contains(&format!("per request ({phrase})")),
        "{phrase}"
    );
    assert!(!text(&doc).contains("one rate"));
}
