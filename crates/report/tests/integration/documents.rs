//! The attack, batch, predict and verify documents on small fixtures saved
//! from real `--json` runs: snapshots of their text and Markdown, each JSON
//! document against its schema, JSON re-rendered byte for byte, CSV shape,
//! and one number rule across every document.
//!
//! The verify fixture is a real run with one check flipped to failed by hand,
//! so that a FAIL line is rendered.

use std::path::PathBuf;

use iolab_model::attack::{AttackResult, Progress};
use iolab_model::batch::{BatchFile, BatchResult, TaskTypeStats};
use iolab_model::predict::{PredictFile, Prediction};
use iolab_report::{Document, Format, RenderError};

/// (fixture, schema file) of every saved document, runs included.
const DOCUMENTS: [(&str, &str); 13] = [
    ("attack-open", "attack"),
    ("attack-refused", "attack"),
    ("attack-held", "attack"),
    ("batch-e3", "batch"),
    ("batch-spans", "batch"),
    ("predict-showdown", "predict"),
    ("verify-pool", "verify"),
    ("showdown", "runs"),
    ("e1-workers", "runs"),
    ("e2-scaled-failed", "runs"),
    ("e3-calls", "runs"),
    ("spans", "runs"),
    ("waiting", "runs"),
];

/// The fixtures that are not results folders (those have render.rs).
const NEW: [&str; 6] = [
    "attack-open",
    "attack-refused",
    "attack-held",
    "batch-e3",
    "predict-showdown",
    "verify-pool",
];

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/{name}.json"))
}

fn read(name: &str) -> String {
    std::fs::read_to_string(path(name)).expect("fixture")
}

fn load(name: &str) -> Document {
    Document::from_json(&read(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn text(doc: &Document, f: Format) -> String {
    String::from_utf8(doc.render(f).expect("renders")).expect("utf-8")
}

#[test]
fn text_snapshots() {
    for name in NEW {
        insta::assert_snapshot!(format!("text-{name}"), text(&load(name), Format::Table));
    }
}

#[test]
fn markdown_snapshots() {
    for name in NEW {
        insta::assert_snapshot!(
            format!("markdown-{name}"),
            text(&load(name), Format::Markdown)
        );
    }
}

#[test]
fn every_document_is_recognised_by_its_schema() {
    for (name, kind) in DOCUMENTS {
        let doc = load(name);
        assert_eq!(doc.schema(), format!("iolab.{kind}/1"), "{name}");
        assert!(doc.formats().contains(&Format::Json), "{name}");
    }
    let unknown = Document::from_json(r#"{"schema":"iolab.nope/1"}"#).unwrap_err();
    assert!(
        unknown
            .to_string()
            .contains("expected one of: iolab.runs/1"),
        "{unknown}"
    );
    let bare = Document::from_json(r#"{"schema":"iolab.batch/1"}"#).unwrap_err();
    assert!(
        bare.to_string().starts_with("does not match iolab.batch/1"),
        "{bare}"
    );
    assert!(Document::from_json("{nope").is_err());
}

#[test]
fn json_documents_match_their_schemas() {
    for (name, kind) in DOCUMENTS {
        let schema_path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../schema/{kind}.schema.json"));
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
        let v = jsonschema::validator_for(&schema).expect("schema compiles");
        let doc: serde_json::Value = serde_json::from_str(&read(name)).unwrap();
        let errors: Vec<String> = v
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path))
            .take(5)
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        // A document of another kind does not pass.
        let mut other = doc.clone();
        other["schema"] = "iolab.other/1".into();
        assert!(!v.is_valid(&other), "{name}: {kind} schema accepts any tag");
    }
}

/// Every timeline in the fixtures (a served run's measured and predicted,
/// a batch's) is an `iolab.spans/1` document by its own schema.
#[test]
fn timelines_match_the_spans_schema() {
    let schema_path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schema/spans.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let runs: serde_json::Value = serde_json::from_str(&read("spans")).unwrap();
    let batch: serde_json::Value = serde_json::from_str(&read("batch-spans")).unwrap();
    let mut timelines = vec![&batch["runs"][0]["spans"]];
    for r in runs["runs"].as_array().unwrap() {
        timelines.push(&r["spans"]["measured"]);
        timelines.push(&r["spans"]["predicted"]);
    }
    assert_eq!(timelines.len(), 5);
    for t in timelines {
        let errors: Vec<String> = v.iter_errors(t).map(|e| e.to_string()).take(3).collect();
        assert!(errors.is_empty(), "{errors:?}");
        assert!(!t["spans"].as_array().unwrap().is_empty());
    }
}

/// Regression: without serde_json's `float_roundtrip`, a saved document
/// parsed back to a neighbouring double (0.023076923076923078 came back as
/// 0.02307692307692308), so re-rendering it as JSON changed its bytes.
#[test]
fn json_rerenders_byte_for_byte() {
    for name in NEW {
        let again = load(name).render(Format::Json).unwrap();
        assert_eq!(String::from_utf8(again).unwrap(), read(name), "{name}");
    }
}

#[test]
fn csv_has_a_header_and_one_record_per_item() {
    let records = |name: &str| {
        let csv = text(&load(name), Format::Csv);
        let lines: Vec<&str> = csv.lines().collect();
        let cols = lines[0].split(',').count();
        assert!(cols > 2, "{name}: header {}", lines[0]);
        lines.len() - 1
    };
    assert_eq!(records("attack-open"), 1);
    assert_eq!(records("batch-e3"), 5);
    assert_eq!(records("verify-pool"), 25);
    // Explanations hold commas, so they are quoted: still one line per run.
    assert_eq!(records("predict-showdown"), 6);
}

#[test]
fn html_is_offered_for_results_folders_only() {
    for name in NEW {
        let doc = load(name);
        assert!(!doc.formats().contains(&Format::Html), "{name}");
        match doc.render(Format::Html) {
            Err(RenderError::Unsupported { offered, .. }) => {
                assert_eq!(offered, "table, md, json, csv", "{name}")
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    assert!(load("showdown").formats().contains(&Format::Html));
}

/// The rule issue 15 asked for: one latency, one spelling, in every document.
#[test]
fn a_p99_of_101_3_ms_prints_the_same_everywhere() {
    let mut attack = AttackResult::default();
    attack.latency_ms.p99 = 101.3;
    // One answer: with none, latencies print `-` (issue 30, finding 18).
    attack.requests.ok = 1;
    let io = TaskTypeStats {
        p99_ms: 101.3,
        ..TaskTypeStats::default()
    };
    let mut batch = BatchResult::default();
    batch.by_type.insert("io".into(), io);
    let mut pred = Prediction::default();
    pred.latency_ms.p99 = 101.3;
    let docs = [
        iolab_report::attack::text(&attack),
        iolab_report::batch::text(&BatchFile::new(vec![batch]).runs),
        iolab_report::predict::text(&PredictFile::new("p", 2, vec![pred])),
    ];
    for d in &docs {
        assert!(d.contains("101ms") && !d.contains("101.3"), "{d}");
    }
    let progress = Progress {
        p99_ms: 101.3,
        ..Progress::default()
    };
    assert!(iolab_report::attack::progress_line(&progress).ends_with("p99 101ms"));
    // And in a results folder's table.
    let Document::Runs(mut runs) = load("showdown") else {
        panic!("showdown is a results folder")
    };
    for r in &mut runs.runs {
        if let Some(a) = r.attack.as_mut() {
            a.latency_ms.p99 = 101.3;
        }
    }
    let table = String::from_utf8(iolab_report::render(&runs, Format::Table).unwrap()).unwrap();
    assert!(
        table.contains(" 101ms ") && !table.contains("101.3"),
        "{table}"
    );
}

/// Issue 30, finding 10: answers ended by a TLS close without close_notify
/// are said beside `Requests`, with their count, next to the retries.
#[test]
fn r30_10_unclean_tls_closes_are_said_with_their_count() {
    let mut attack = AttackResult::default();
    attack.requests.sent = 9;
    attack.requests.ok = 9;
    let plain = iolab_report::attack::text(&attack);
    assert!(!plain.contains("close_notify"), "{plain}");
    attack.requests.unclean_tls_close = 7;
    attack.requests.retried = 2;
    let text = iolab_report::attack::text(&attack);
    let line = text.lines().find(|l| l.starts_with("Requests")).unwrap();
    assert!(
        line.contains("(2 of sent retried once")
            && line.contains("; 7 answers ended at a TLS close without close_notify"),
        "{line}"
    );
}
