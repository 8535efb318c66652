//! The shared parser vectors (`vectors/steps.json`) hold for the Rust parser.
//! Every other runtime's port runs the same file.

use iolab_model::steps::parse;
use serde_json::Value;

#[test]
fn steps_vectors_hold() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../vectors/steps.json"
    ))
    .expect("vectors/steps.json");
    let doc: Value = serde_json::from_str(&text).expect("valid JSON");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 20);
    for case in cases {
        let input = case["input"].as_str().unwrap();
        match (case.get("canonical"), case.get("error")) {
            (Some(c), None) => {
                let step = parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
                assert_eq!(step.to_string(), c.as_str().unwrap(), "input {input:?}");
                assert_eq!(
                    step.leaf_count() as u64,
                    case["leaves"].as_u64().unwrap(),
                    "input {input:?}"
                );
            }
            (None, Some(e)) => {
                let err = parse(input).expect_err(input);
                assert_eq!(err.to_string(), e.as_str().unwrap(), "input {input:?}");
            }
            _ => panic!("case needs exactly one of canonical/error: {case}"),
        }
    }
}
