//! Hostile presets (issue 16): the corpus in `fuzz/corpus/presets` and
//! proptest-made loads. Properties: no panic; a refusal is one line naming
//! the preset's file and field, never a command-line flag; whatever parses
//! passes the run's own checks (so `--dry-run` accepts only what a run
//! would) and has a finite estimate.

#[path = "../../../fuzz/corpus.rs"]
mod corpus;

use iolab_lab::estimate::estimate;
use iolab_lab::preset::{parse_plan, Overrides};
use iolab_lab::runner::check_http;
use iolab_model::experiment::Work;
use proptest::prelude::*;

/// What must hold of any preset text, parsed or refused.
fn check_preset(text: &str) -> Result<(), String> {
    match parse_plan(text, "p.toml", Overrides::default()) {
        Ok(plan) => {
            for run in &plan.runs {
                if let Work::Http(w) = &run.work {
                    check_http(w).map_err(|(f, e)| format!("{}: {f}: {e}", run.name))?;
                }
            }
            let _ = estimate(&plan);
            Ok(())
        }
        Err(e) if e.0.contains('\n') => Err(format!("two lines: {}", e.0)),
        Err(e) if !e.0.starts_with("p.toml") => Err(format!("no file named: {}", e.0)),
        Err(e) if e.0.contains("--") => Err(format!("names a flag: {}", e.0)),
        Err(_) => Ok(()),
    }
}

fn refusal(name: &str) -> String {
    let text = std::fs::read_to_string(corpus::dir("presets").join(name)).unwrap();
    parse_plan(&text, "p.toml", Overrides::default())
        .map(|_| ())
        .unwrap_err()
        .0
}

#[test]
fn the_preset_corpus_is_parsed_or_refused_in_one_line() {
    for (name, bytes) in corpus::inputs("presets") {
        let text = String::from_utf8_lossy(&bytes);
        check_preset(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// Issue 16, finding 12: `--dry-run` accepted what the run refused, and the
/// run named CLI flags. Presets now refuse at expansion, naming the field.
#[test]
fn r16_12_dry_run_refuses_what_the_run_refuses_naming_the_field() {
    for (name, field) in [
        ("rate-1e308-scale.toml", "load.rate"),
        ("max-connections-5e6.toml", "load.max_connections"),
        ("closed-huge-concurrency.toml", "load.concurrency"),
    ] {
        let e = refusal(name);
        assert!(e.contains(field) && !e.contains("--"), "{name}: {e}");
    }
}

/// Issue 16, finding 8: `workers = 99999999999` was clamped to u32::MAX
/// silently and the run recorded `start-failed` with a backtrace.
#[test]
fn r16_08_a_preset_asking_for_more_threads_than_the_machine_starts() {
    let e = refusal("workers-huge.toml");
    assert!(e.contains("workers") && !e.contains('\n'), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: corpus::cases(256),
        max_shrink_iters: 128,
        ..ProptestConfig::default()
    })]

    #[test]
    fn open_loads_hold_their_properties(
        rate in prop_oneof![any::<f64>(), 0.0..1e7f64],
        secs in prop_oneof![any::<u32>(), 0u32..100_000],
        scale in prop_oneof![Just(1.0f64), 0.0..10.0f64],
        max in prop_oneof![0..i64::MAX as u64, 0u64..100_000],
    ) {
        let text = format!(
            "name = \"p\"\ndescription = \"d\"\nscale = {scale:?}\n[load]\nsteps = \"sleep:1\"\n\
             rate = {rate:?}\nduration = \"{secs}s\"\nmax_connections = {max}\n\
             [[targets]]\nmodel = \"loop-async\"\n"
        );
        prop_assert_eq!(check_preset(&text), Ok(()));
    }

    #[test]
    fn closed_loads_hold_their_properties(
        clients in prop_oneof![0..i64::MAX as u64, 0u64..10_000],
        requests in prop_oneof![0..i64::MAX as u64, 0u64..1_000_000],
        workers in prop_oneof![0..i64::MAX as u64, 0u64..100],
    ) {
        let text = format!(
            "name = \"p\"\ndescription = \"d\"\n[load]\nsteps = \"sleep:1\"\n\
             driver = \"closed\"\nconcurrency = {clients}\nrequests = {requests}\n\
             [[targets]]\nmodel = \"loop-blocking\"\nworkers = {workers}\n"
        );
        prop_assert_eq!(check_preset(&text), Ok(()));
    }
}
