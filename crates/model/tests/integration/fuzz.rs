//! Hostile input to the model's parsers (issue 16): steps strings, durations
//! and CPU lists, the corpus in `fuzz/corpus/steps` and proptest-made text.
//! Properties: no panic; whatever parses is within the limits and prints
//! back to itself; every refusal is one line.

#[path = "../../../../fuzz/corpus.rs"]
mod corpus;

use iolab_model::limits::parse_cpu_list;
use iolab_model::parse_duration;
use iolab_model::steps::{self, limits, Step};
use proptest::prelude::*;

/// Depth of `seq`/`par` nesting and number of leaves.
fn shape(s: &Step) -> (usize, usize) {
    match s {
        Step::Seq(c) | Step::Par(c) => c
            .iter()
            .map(shape)
            .fold((1, 0), |(d, l), (cd, cl)| (d.max(cd + 1), l + cl)),
        _ => (0, 1),
    }
}

/// What must hold of any input, parsed or refused.
fn check_steps(input: &str) -> Result<(), String> {
    match steps::parse(input) {
        Ok(step) => {
            let (depth, leaves) = shape(&step);
            if depth > limits::MAX_DEPTH || leaves > limits::MAX_LEAVES {
                return Err(format!("past the limits: depth {depth}, {leaves} leaves"));
            }
            for call in step.io_calls() {
                if let Some(micros) = call.micros() {
                    if micros as f64 > limits::MAX_MS * 1000.0 {
                        return Err(format!("{micros} us is past MAX_MS"));
                    }
                }
            }
            let again = steps::parse(&step.to_string()).map_err(|e| e.to_string())?;
            if again != step {
                return Err(format!("'{step}' does not print back to itself"));
            }
            Ok(())
        }
        Err(e) if e.to_string().contains('\n') => Err(format!("two lines: {e}")),
        Err(_) => Ok(()),
    }
}

#[test]
fn the_steps_corpus_is_parsed_or_refused_in_one_line() {
    for (name, bytes) in corpus::inputs("steps") {
        let text = String::from_utf8_lossy(&bytes);
        check_steps(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    // The corpus holds each kind of fault, so it is refused where it must be.
    for (name, refused) in [("percent-plus-f.txt", true), ("nested-ok.txt", false)] {
        let text = std::fs::read_to_string(corpus::dir("steps").join(name)).unwrap();
        assert_eq!(steps::parse(&text).is_err(), refused, "{name}");
    }
}

#[test]
fn durations_and_cpu_lists_are_bounded() {
    for d in [
        "1e400s",
        "169h",
        "99999999999999999999h",
        "-1s",
        "NaNs",
        "infms",
    ] {
        let e = parse_duration(d).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{d}: {e}");
    }
    assert!(parse_duration("168h").is_ok());
    assert!(parse_cpu_list("0-18446744073709551615").is_err());
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: corpus::cases(512),
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    })]

    #[test]
    fn steps_hold_their_properties(s in "[a-z():,.0-9 %+]{0,80}") {
        prop_assert_eq!(check_steps(&s), Ok(()));
    }

    #[test]
    fn steps_of_any_text_hold_their_properties(s in "\\PC{0,200}") {
        prop_assert_eq!(check_steps(&s), Ok(()));
    }

    #[test]
    fn durations_never_panic_and_stay_within_a_week(s in "[0-9.e+-]{0,30}(us|ms|s|m|h|x)?") {
        if let Ok(d) = parse_duration(&s) {
            prop_assert!(d.as_secs() <= 7 * 86_400);
        }
    }

    #[test]
    fn cpu_lists_never_allocate_past_a_cpu_set(s in "[0-9,-]{0,40}") {
        if let Ok(cpus) = parse_cpu_list(&s) {
            prop_assert!(cpus.len() <= iolab_model::limits::CPU_SETSIZE);
        }
    }
}
