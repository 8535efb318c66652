//! The parser's and printer's own tests (the shared vectors are in tests/integration/vectors.rs).

use super::*;
use proptest::prelude::*;

fn sleep(ms: u64) -> Step {
    Step::Io(BackendKind::Sleep.timed_call(ms * 1000).unwrap())
}

#[test]
fn parses_leaves_and_groups() {
    assert_eq!(parse("sleep:200").unwrap(), sleep(200));
    assert_eq!(
        parse("cpu:1000000").unwrap(),
        Step::Cpu { terms: 1_000_000 }
    );
    assert_eq!(
        parse("par(sleep:200,sleep:500,sleep:300)").unwrap(),
        Step::Par(vec![sleep(200), sleep(500), sleep(300)])
    );
    let s = parse("seq(pg:200, http:500, mc:big)").unwrap();
    assert_eq!(s.leaf_count(), 3);
    assert_eq!(s.to_string(), "seq(pg:200,http:500,mc:big)");
    assert_eq!(
        parse("sleep:1,cpu:5").unwrap(),
        Step::Seq(vec![sleep(1), Step::Cpu { terms: 5 }])
    );
}

#[test]
fn fractional_millis_round_trip() {
    let s = parse("sleep:0.5").unwrap();
    assert_eq!(s, Step::Io(BackendKind::Sleep.timed_call(500).unwrap()));
    assert_eq!(s.to_string(), "sleep:0.5");
    assert_eq!(parse("http:12.125").unwrap().to_string(), "http:12.125");
}

#[test]
fn errors_name_the_position() {
    let e = parse("par(sleep:200,sleep:5").unwrap_err();
    assert_eq!(e.to_string(), "steps: expected ')' at 21");
    assert_eq!(parse("").unwrap_err().position, 0);
    assert!(parse("nap:3")
        .unwrap_err()
        .message
        .contains("unknown step 'nap'"));
    assert_eq!(parse("sleep:abc").unwrap_err().position, 6);
    assert!(parse("sleep:100)")
        .unwrap_err()
        .message
        .contains("unexpected ')'"));
    assert!(parse("par()").unwrap_err().message.contains("at least one"));
    assert!(parse("sleep:99999999")
        .unwrap_err()
        .message
        .contains("limit"));
}

#[test]
fn nominal_io_adds_seq_and_maxes_par() {
    let s = parse("seq(sleep:200,par(sleep:500,sleep:300),cpu:10)").unwrap();
    assert_eq!(s.nominal_io(), Duration::from_millis(700));
    assert_eq!(s.cpu_terms(), 10);
}

#[test]
fn scaling_keeps_non_zero_amounts() {
    let s = parse("seq(sleep:1000,cpu:3)").unwrap().scaled(0.01);
    assert_eq!(s.to_string(), "seq(sleep:10,cpu:1)");
}

#[test]
fn depth_and_size_are_bounded() {
    let deep = "seq(".repeat(20) + "sleep:1" + &")".repeat(20);
    assert!(parse(&deep).unwrap_err().message.contains("nesting"));
    let wide = vec!["sleep:1"; limits::MAX_LEAVES + 1].join(",");
    assert!(parse(&wide).unwrap_err().message.contains("more than"));
}

fn arb_step() -> impl Strategy<Value = Step> {
    let leaf = prop_oneof![
        (0u64..1_000_000).prop_map(|terms| Step::Cpu { terms }),
        (
            0..BackendKind::ALL.len(),
            0u64..10_000_000,
            "[a-z0-9_.-]{1,20}"
        )
            .prop_map(|(i, micros, key)| {
                let kind = BackendKind::ALL[i];
                Step::Io(kind.timed_call(micros).or(kind.keyed_call(key)).unwrap())
            }),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..5).prop_map(Step::Seq),
            prop::collection::vec(inner, 1..5).prop_map(Step::Par),
        ]
    })
}

proptest! {
    #[test]
    fn never_panics(s in "\\PC{0,64}") {
        let _ = parse(&s);
    }

    #[test]
    fn never_panics_on_near_misses(s in "[a-z():,.0-9 ]{0,48}") {
        let _ = parse(&s);
    }

    #[test]
    fn display_round_trips(step in arb_step()) {
        prop_assert_eq!(parse(&step.to_string()).unwrap(), step);
    }
}

#[test]
fn every_backend_is_a_step_word_and_the_unknown_step_message_lists_them_all() {
    for (i, kind) in BackendKind::ALL.into_iter().enumerate() {
        assert_eq!(kind as usize, i, "ALL is in declaration order");
    }
    let message = parse("nap:3").unwrap_err().message;
    for word in step_words() {
        assert!(message.contains(word), "{word} missing from {message}");
    }
    for kind in BackendKind::ALL {
        let text = match kind.def().arg {
            ArgSyntax::Millis => format!("{kind}:2.5"),
            ArgSyntax::Key { .. } => format!("{kind}:k-1"),
        };
        let step = parse(&text).unwrap();
        assert_eq!(step.io_calls()[0].kind(), kind);
        assert_eq!(step.to_string(), text);
    }
}
