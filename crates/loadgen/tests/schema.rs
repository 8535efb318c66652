//! The `iolab.attack/1` JSON document matches `schema/attack.schema.json`.

mod common;

use common::{open, run, server};

fn schema() -> serde_json::Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/attack.schema.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("schema file"))
        .expect("schema is JSON")
}

#[test]
fn results_match_the_schema() {
    let validator = jsonschema::validator_for(&schema()).expect("schema compiles");
    let srv = server::spawn(0);
    let mut plan = open(&srv.url("/"), 50.0, 0.5);
    plan.cpus = vec![0];
    for r in [
        run(&plan).result,
        run(&open(
            &format!("http://127.0.0.1:{}/", common::closed_port()),
            20.0,
            0.25,
        ))
        .result,
    ] {
        let doc = serde_json::to_value(&r).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
    // And the schema bites: a wrong tag or a missing key is refused.
    let mut doc = serde_json::to_value(run(&plan).result).unwrap();
    doc["schema"] = "iolab.attack/2".into();
    assert!(!validator.is_valid(&doc));
    doc["schema"] = "iolab.attack/1".into();
    doc.as_object_mut().unwrap().remove("requests");
    assert!(!validator.is_valid(&doc));
}
