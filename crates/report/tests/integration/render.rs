//! Renderers on the fixture `runs.json` files: snapshots of the table and
//! Markdown, well-formed self-contained HTML whose charts all have data,
//! byte-identical re-rendering, flat exports, PNGs, and the explanations'
//! arithmetic.

use std::path::PathBuf;

use iolab_model::runs::RunsFile;
use iolab_report::{charts, render, render_pngs, summary, Format};

const FIXTURES: [&str; 7] = [
    "showdown",
    "e2-scaled-failed",
    "e1-workers",
    "e3-calls",
    "spans",
    "waiting",
    "c10k",
];

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/{name}.json"))
}

fn load(name: &str) -> RunsFile {
    iolab_model::runs::load(&path(name)).expect("fixture loads as iolab.runs/1")
}

fn text(runs: &RunsFile, f: Format) -> String {
    String::from_utf8(render(runs, f).expect("renders")).expect("utf-8")
}

#[test]
fn table_snapshots() {
    for name in FIXTURES {
        insta::assert_snapshot!(format!("table-{name}"), text(&load(name), Format::Table));
    }
}

#[test]
fn markdown_snapshots() {
    for name in FIXTURES {
        insta::assert_snapshot!(
            format!("markdown-{name}"),
            text(&load(name), Format::Markdown)
        );
    }
}

#[test]
fn rerendering_is_byte_identical() {
    for name in FIXTURES {
        let runs = load(name);
        // Saved and loaded again, as a results folder is.
        let again: RunsFile = serde_json::from_str(&serde_json::to_string(&runs).unwrap()).unwrap();
        for &f in Format::ALL {
            let a = render(&runs, f).unwrap();
            assert_eq!(a, render(&runs, f).unwrap(), "{name} {f}");
            assert_eq!(
                a,
                render(&again, f).unwrap(),
                "{name} {f} after a round trip"
            );
        }
    }
}

#[test]
fn html_is_well_formed_and_self_contained() {
    for name in FIXTURES {
        let runs = load(name);
        let html = text(&runs, Format::Html);
        let opts = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        let doc = roxmltree::Document::parse_with_options(&html, opts)
            .unwrap_or_else(|e| panic!("{name}: HTML is not well-formed: {e}"));
        let names: Vec<&str> = doc.descendants().map(|n| n.tag_name().name()).collect();
        for banned in ["link", "img", "iframe", "object", "embed"] {
            assert!(!names.contains(&banned), "{name}: has <{banned}>");
        }
        // The one script is the timelines' inline zoom, on pages that have them.
        let scripts: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("script"))
            .collect();
        let timelines = html.contains("class=\"chart timeline\"");
        assert_eq!(scripts.len(), usize::from(timelines), "{name}: scripts");
        assert!(scripts.iter().all(|s| s.attributes().len() == 0), "{name}");
        for n in doc.descendants() {
            for a in n.attributes() {
                assert!(
                    !matches!(a.name(), "src" | "href"),
                    "{name}: {}= on <{}>",
                    a.name(),
                    n.tag_name().name()
                );
            }
        }
        // url() only for a fragment of the page itself (a timeline's clip path).
        for (i, _) in html.match_indices("url(") {
            assert!(html[i..].starts_with("url(#"), "{name}: url() to elsewhere");
        }
        assert!(!html.contains("@import"), "{name}: CSS @import");
        for (i, _) in html.match_indices("://") {
            let rest = &html[i..];
            assert!(
                rest.starts_with("://127.0.0.1"),
                "{name}: network reference near {}",
                &html[i.saturating_sub(20)..i + 30]
            );
        }
        // Every chart is inlined, and has data points with tooltips.
        let svgs = doc.descendants().filter(|n| n.has_tag_name("svg")).count();
        let cs = charts::charts(&runs);
        assert_eq!(svgs, cs.len(), "{name}: one <svg> per chart");
        assert!(!cs.is_empty(), "{name}: no charts");
        for c in &cs {
            let d = roxmltree::Document::parse(&c.svg).unwrap_or_else(|e| panic!("{}: {e}", c.id));
            let tipped = d
                .descendants()
                .filter(|n| matches!(n.tag_name().name(), "circle" | "rect" | "polygon" | "path"))
                .filter(|n| n.children().any(|k| k.has_tag_name("title")))
                .count();
            assert!(
                tipped > 0 && c.points > 0,
                "{name}/{}: no data points",
                c.id
            );
            assert_eq!(
                tipped, c.points,
                "{name}/{}: every point has a tooltip",
                c.id
            );
        }
    }
}

#[test]
fn html_has_every_section_the_data_supports() {
    let sd = text(&load("showdown"), Format::Html);
    for id in [
        "glance",
        "table",
        "sweep",
        "predictions",
        "spectrum",
        "series",
        "environment",
    ] {
        assert!(
            sd.contains(&format!("<section id=\"{id}\"")),
            "showdown lacks {id}"
        );
    }
    assert!(sd.contains("iolab run showdown"), "rerun command");
    let e2 = text(&load("e2-scaled-failed"), Format::Html);
    assert!(e2.contains("<section id=\"published\""));
    assert!(e2.contains("3,400"), "published E2 pool count shown");
    let e1 = text(&load("e1-workers"), Format::Html);
    assert!(e1.contains("Total time vs workers"));
    let sp = text(&load("spans"), Format::Html);
    assert!(
        sp.contains("<section id=\"timeline\""),
        "spans: timeline section"
    );
    assert!(sp.contains("pool(threads=2) · measured"));
    assert!(sp.contains("pool(threads=2) · predicted"));
    assert!(!sd.contains("<script"), "no script without timelines");
    let e3 = text(&load("e3-calls"), Format::Html);
    assert!(e3.contains("Total time vs number of calls"));
    assert!(e3.contains("100.1s"), "published E3 sequential total");
}

#[test]
fn flat_exports_have_one_row_per_run() {
    for name in FIXTURES {
        let runs = load(name);
        let json: serde_json::Value =
            serde_json::from_slice(&render(&runs, Format::Json).unwrap()).unwrap();
        let rows = json.as_array().expect("array");
        assert_eq!(rows.len(), runs.runs.len());
        for r in rows {
            let mut keys: Vec<&str> = r.as_object().unwrap().keys().map(|k| k.as_str()).collect();
            let mut cols = summary::COLUMNS.to_vec();
            keys.sort();
            cols.sort();
            assert_eq!(keys, cols, "{name}: JSON keys are the CSV columns");
        }
        let csv = text(&runs, Format::Csv);
        let mut lines = csv.lines();
        assert_eq!(lines.next().unwrap(), summary::COLUMNS.join(","));
        // Explanations contain commas, so count records by run names at line starts.
        let records = csv
            .lines()
            .skip(1)
            .filter(|l| l.starts_with(&format!("{},", runs.plan.name)))
            .count();
        assert_eq!(records, runs.runs.len(), "{name}: CSV records");
    }
    let sd = load("showdown");
    let rows = summary::rows(&sd);
    let pool = rows.iter().find(|r| r.name == "pool-rate=400").unwrap();
    let a = sd
        .runs
        .iter()
        .find(|r| r.name == "pool-rate=400")
        .unwrap()
        .attack
        .clone()
        .unwrap();
    assert_eq!(pool.ok, Some(a.requests.ok));
    assert_eq!(pool.err_timeout, Some(a.errors.timeout));
    assert_eq!(pool.p99_ms, Some(a.latency_ms.p99));
    assert!(pool.predicted_success_ratio.is_some());
}

#[test]
fn star_only_beyond_the_noise_and_a_tie_said_as_a_tie() {
    use iolab_model::noise;
    let sd = load("showdown");
    let rows = summary::rows(&sd);
    let fig = |name: &str| {
        let r = sd.runs.iter().find(|r| r.name == name).unwrap();
        let a = r.attack.as_ref().unwrap();
        (noise::goodput(a, &r.reps), noise::p99(a, &r.reps))
    };
    for rate in [50, 100, 200, 400, 800] {
        let group: Vec<_> = rows
            .iter()
            .filter(|r| r.coordinates.get("rate").and_then(|v| v.as_u64()) == Some(rate))
            .collect();
        assert_eq!(group.len(), 6);
        let best: Vec<_> = group.iter().filter(|r| r.best).collect();
        let tied: Vec<_> = group.iter().filter(|r| r.tied).collect();
        assert!(best.len() + tied.len() > 0, "rate {rate}: nothing marked");
        assert!(best.len() <= 1 && (best.is_empty() || tied.is_empty()));
        assert_ne!(tied.len(), 1, "rate {rate}: a tie of one");
        // A ★ beats every other run beyond the noise: on goodput, or level
        // on goodput and lower on p99.
        for b in &best {
            let (bg, bp) = fig(&b.name);
            for r in group.iter().filter(|r| r.name != b.name) {
                let (g, p) = fig(&r.name);
                let beats = (bg.differs(&g) && bg.value > g.value)
                    || (!bg.differs(&g) && bp.differs(&p) && bp.value < p.value);
                assert!(beats, "rate {rate}: {} marked over {}", b.name, r.name);
            }
        }
        // Every run of a tie is level with every other on both figures.
        for a in &tied {
            for b in &tied {
                let ((ag, ap), (bg, bp)) = (fig(&a.name), fig(&b.name));
                assert!(
                    !ag.differs(&bg) && !ap.differs(&bp),
                    "{} {}",
                    a.name,
                    b.name
                );
            }
        }
    }
    // At 400 req/s thread-per-request (392.124/s, p99 121 ms) and loop-async
    // (392.043/s, p99 121 ms) are a tie: neither gets ★.
    let at400: Vec<_> = rows
        .iter()
        .filter(|r| r.name.ends_with("rate=400") && r.tied)
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(
        at400,
        ["thread-per-request-rate=400", "loop-async-rate=400"]
    );
    // Failed runs are never marked.
    let e2 = summary::rows(&load("e2-scaled-failed"));
    assert!(e2
        .iter()
        .filter(|r| r.best || r.tied)
        .all(|r| r.outcome == "completed"));
}

#[test]
fn explanations_do_the_arithmetic() {
    let sd = load("showdown");
    let by = |n: &str| sd.runs.iter().find(|r| r.name == n).unwrap();
    let pool = iolab_report::explain_in(&sd, by("pool-rate=400"));
    // 400 req/s x 100 ms = 40 in flight > 20 threads; 20/0.1 = 200 req/s; queue +200/s;
    // first timeouts after (2 - 0.1) / (2 - 1) = 1.9 s.
    assert!(
        pool.starts_with(
            "pool(threads=20) was overloaded: 36.1% ok of 2,000, goodput 145 req/s, p99 1.97s, because 400 req/s x 100ms = 40 in flight are needed but it holds at most 20 threads"
        ),
        "{pool}"
    );
    assert!(
        pool.contains("(capacity 20/100ms = 200 req/s), so the queue grew 200/s"),
        "{pool}"
    );
    assert!(
        pool.contains("requests sent after about 1.90s timed out (1,277 of them)"),
        "{pool}"
    );
    let fast = iolab_report::explain_in(&sd, by("loop-async-rate=800"));
    assert!(
        fast.starts_with("loop-async(workers=2) held up: 100% ok of 4,000"),
        "{fast}"
    );
    assert!(
        fast.contains(
            "as 800 req/s x 100ms = 80 in flight are needed and no thread held while waiting"
        ),
        "{fast}"
    );
    let lb = iolab_report::explain(by("loop-blocking-rate=50"));
    assert!(
        lb.contains("but it holds at most 2 event-loop threads"),
        "{lb}"
    );

    let e2 = load("e2-scaled-failed");
    let off = e2
        .runs
        .iter()
        .find(|r| r.name == "loop-offload-rate=450")
        .unwrap();
    let s = iolab_report::explain_in(&e2, off);
    assert!(s.contains("4,500 req/s (450 unscaled) x 100ms (1.00s unscaled) = 450 in flight are needed but it holds at most 64 offload threads"), "{s}");
    assert!(
        s.contains("EADDRNOTAVAIL (the client ran out of ephemeral ports)"),
        "{s}"
    );
    let sat = iolab_report::explain_in(
        &e2,
        e2.runs
            .iter()
            .find(|r| r.name == "loop-async-rate=450")
            .unwrap(),
    );
    assert!(sat.contains("never sent"), "{sat}");
    let skipped = iolab_report::explain_in(
        &e2,
        e2.runs
            .iter()
            .find(|r| r.name == "virtual-rate=450")
            .unwrap(),
    );
    assert_eq!(skipped, "virtual was skipped (runtime jvm not available: java not found on PATH); nothing measured.");

    let e3 = load("e3-calls");
    let p8 = e3
        .runs
        .iter()
        .find(|r| r.name == "pool(threads=8)-calls=100")
        .unwrap();
    let s = iolab_report::explain_in(&e3, p8);
    assert!(
        s.contains("ran 100 calls of 10.0ms (1.00s unscaled) on 8 threads: ceil(100/8) = 13 rounds x 10.0ms = 130ms (13.0s unscaled) expected"),
        "{s}"
    );
}

#[test]
fn pngs_are_written_for_every_chart() {
    for name in ["e3-calls", "spans"] {
        let runs = load(name);
        let dir = tempfile::tempdir().unwrap();
        let files = render_pngs(&runs, dir.path()).unwrap();
        assert_eq!(files.len(), charts::charts(&runs).len());
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            assert!(bytes.starts_with(b"\x89PNG"), "{}", f.display());
            let colours = iolab_report::distinct_colours(&bytes).unwrap();
            assert!(colours > 8, "{}: only {colours} colours", f.display());
        }
    }
    // The timelines are among them: measured and predicted for each run.
    let dir = tempfile::tempdir().unwrap();
    render_pngs(&load("spans"), dir.path()).unwrap();
    for f in ["timeline-pool-measured", "timeline-loop-async-predicted"] {
        assert!(dir.path().join(format!("{f}.png")).is_file(), "{f}");
    }
}

#[test]
fn schema_validates_the_fixtures() {
    let schema_path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schema/runs.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    for name in FIXTURES {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path(name)).unwrap()).unwrap();
        let errors: Vec<String> = v
            .iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .take(5)
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
    // And it rejects what is not a runs file.
    let mut bad: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path("e3-calls")).unwrap()).unwrap();
    bad["schema"] = "iolab.attack/1".into();
    assert!(!v.is_valid(&bad));
    bad["schema"] = "iolab.runs/1".into();
    bad["runs"][0]["outcome"] = serde_json::json!({"status": "exploded"});
    assert!(!v.is_valid(&bad));
}
