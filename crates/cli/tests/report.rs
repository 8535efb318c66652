//! `iolab report` end to end: formats on a fixture results folder, bad input
//! (exit 2, one line), `--png`, and a headless-Chromium screenshot of the HTML.

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::prelude::*;
use predicates::prelude::*;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../report/tests/fixtures/{name}.json"))
}

/// A results folder holding the fixture as `runs.json`.
fn results(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(name), dir.path().join("runs.json")).unwrap();
    dir
}

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

#[test]
fn table_is_the_default() {
    let dir = results("showdown");
    iolab()
        .args(["report"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("offered 400 req/s · sleep:100"))
        .stdout(predicate::str::contains(
            "pool(threads=20) was overloaded: 36.1% ok of 2,000, goodput 145 req/s, p99 1.97s, because 400 req/s x 100ms = 40 in flight are needed but it holds at most 20 threads",
        ))
        .stdout(predicate::str::contains("★"));
}

#[test]
fn every_format_renders_and_is_stable() {
    let dir = results("e2-scaled-failed");
    for f in ["table", "md", "html", "json", "csv"] {
        let run = || {
            iolab()
                .arg("report")
                .arg(dir.path())
                .args(["--format", f])
                .output()
                .unwrap()
        };
        let (a, b) = (run(), run());
        assert!(
            a.status.success(),
            "{f}: {}",
            String::from_utf8_lossy(&a.stderr)
        );
        assert!(!a.stdout.is_empty(), "{f}: empty");
        assert_eq!(a.stdout, b.stdout, "{f}: not byte-identical");
    }
}

#[test]
fn writes_to_a_file_and_pngs() {
    let dir = results("e1-workers");
    let out = dir.path().join("report.html");
    let png = dir.path().join("png");
    iolab()
        .arg("report")
        .arg(dir.path())
        .args(["--format", "html", "-o"])
        .arg(&out)
        .arg("--png")
        .arg(&png)
        .assert()
        .success()
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("wrote"));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    let pngs: Vec<_> = std::fs::read_dir(&png).unwrap().collect();
    assert!(!pngs.is_empty());
    assert!(png.join("batch-time-vs-workers.png").exists());
}

#[test]
fn bad_input_is_a_one_line_usage_error() {
    let empty = tempfile::tempdir().unwrap();
    let check = |args: &[&str], dir: &Path, needle: &str| {
        let out = iolab().arg("report").arg(dir).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(err.contains(needle), "{err}");
    };
    check(&[], empty.path(), "cannot read");
    std::fs::write(empty.path().join("runs.json"), "{not json").unwrap();
    check(&[], empty.path(), "is not valid JSON");
    std::fs::write(
        empty.path().join("runs.json"),
        r#"{"schema":"iolab.nope/1"}"#,
    )
    .unwrap();
    check(
        &[],
        empty.path(),
        "expected one of: iolab.runs/1, iolab.attack/1",
    );
    std::fs::write(
        empty.path().join("runs.json"),
        r#"{"schema":"iolab.attack/1"}"#,
    )
    .unwrap();
    check(&[], empty.path(), "does not match iolab.attack/1");
    std::fs::write(
        empty.path().join("runs.json"),
        r#"{"schema":"iolab.runs/1","runs":3}"#,
    )
    .unwrap();
    check(&[], empty.path(), "does not match iolab.runs/1");
    // Regression (issue 16): an endless file fails fast; since issue 30 a
    // device is refused before a byte is read.
    check(
        &[],
        Path::new("/dev/zero"),
        "is a character device, not a file",
    );
    let good = results("showdown");
    let out = iolab()
        .arg("report")
        .arg(good.path())
        .args(["--format", "pdf"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown format 'pdf'"));
}

/// Headless Chromium opens the HTML report from disk; the screenshot is not blank.
/// Chromium comes from scripts/install-deps (the test set); the script is told not to
/// install (IOLAB_NO_INSTALL), so a missing browser fails here, naming the fix.
#[test]
fn chromium_screenshot_is_not_blank() {
    let dir = results("showdown");
    let out = dir.path().join("shot.png");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/screenshot-report");
    let status = Command::new(script)
        .arg(dir.path())
        .arg(&out)
        .arg("1400,2400")
        .env("IOLAB", env!("CARGO_BIN_EXE_iolab"))
        .env("IOLAB_NO_INSTALL", "1")
        .status()
        .unwrap();
    assert!(
        status.success(),
        "screenshot-report failed (Chromium missing? run scripts/install-deps)"
    );
    let bytes = std::fs::read(&out).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"));
    let colours = iolab_report::distinct_colours(&bytes).unwrap();
    assert!(colours >= 16, "screenshot looks blank: {colours} colours");
}

/// A document saved with `--json` by attack, batch, predict or verify
/// re-renders in the formats it offers; HTML and `--png` are for results
/// folders only (one-line usage errors).
#[test]
fn saved_documents_rerender_by_their_schema() {
    for (name, needle) in [
        ("attack-open", "Latencies     [min, mean, 50"),
        ("batch-e3", "io in svc"),
        (
            "predict-showdown",
            "prediction: ad-hoc (6 runs, 2 cores, simulated)",
        ),
        ("verify-pool", "FAIL sleep-200"),
    ] {
        iolab()
            .arg("report")
            .arg(fixture(name))
            .assert()
            .success()
            .stdout(predicate::str::contains(needle));
        let json = iolab()
            .arg("report")
            .arg(fixture(name))
            .args(["-f", "json"])
            .output()
            .unwrap();
        assert_eq!(json.stdout, std::fs::read(fixture(name)).unwrap(), "{name}");
        for args in [&["-f", "html"][..], &["--png", "charts"][..]] {
            let out = iolab()
                .arg("report")
                .arg(fixture(name))
                .args(args)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{name} {args:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
            assert!(
                out.stdout.is_empty(),
                "{name} {args:?}: printed before failing"
            );
        }
    }
}

/// The timelines' zoom script runs in a real browser: headless Chromium
/// loads the HTML report of the spans fixture, a probe script zooms the
/// first timeline with a wheel event, and the DOM it dumps shows every
/// timeline initialised, the zoomed run's two pictures (measured and
/// predicted) narrowed together and the other run's left whole.
#[test]
fn chromium_runs_the_timeline_zoom() {
    assert!(
        std::path::Path::new("/usr/bin/chromium").exists(),
        "/usr/bin/chromium is missing: run scripts/install-deps (the test set installs it)"
    );
    let dir = results("spans");
    let html = dir.path().join("report.html");
    iolab()
        .arg("report")
        .arg(dir.path())
        .args(["-f", "html", "-o"])
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    let probe = "<script>(function(){var s=document.querySelector('svg.timeline'),r=s.getBoundingClientRect();\
        s.dispatchEvent(new WheelEvent('wheel',{deltaY:-100,clientX:r.left+r.width/2,clientY:r.top+r.height/2,bubbles:true,cancelable:true}));\
        var out=[];document.querySelectorAll('svg.timeline').forEach(function(t){out.push([t.getAttribute('data-tl-group'),t.getAttribute('data-tl-ready'),t.getAttribute('data-tl-a'),t.getAttribute('data-tl-b'),t.getAttribute('data-tl-t1')].join(' '));});\
        document.body.setAttribute('data-probe',out.join(';'));})();</script></body>";
    std::fs::write(&html, page.replace("</body>", probe)).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-dev-shm-usage",
            "--window-size=1400,2400",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let probe = dom
        .split("data-probe=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| {
            panic!(
                "the probe did not run: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    // group ready a b t1, one per timeline: two runs x (measured, predicted).
    let rows: Vec<Vec<&str>> = probe.split(';').map(|r| r.split(' ').collect()).collect();
    assert_eq!(rows.len(), 4, "{probe}");
    let num = |s: &str| s.parse::<f64>().unwrap();
    for r in &rows {
        assert_eq!(r[1], "1", "a timeline was not initialised: {probe}");
    }
    let (first, other): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r[0] == rows[0][0]);
    assert_eq!(first.len(), 2, "{probe}");
    for r in &first {
        let (a, b, t1) = (num(r[2]), num(r[3]), num(r[4]));
        assert!(b - a < 0.9 * t1, "not zoomed: {probe}");
        assert_eq!(
            (r[2], r[3]),
            (first[0][2], first[0][3]),
            "not together: {probe}"
        );
    }
    for r in &other {
        assert_eq!((num(r[2]), num(r[3])), (0.0, num(r[4])), "moved: {probe}");
    }
}

/// `iolab report` on a folder `iolab capacity --out` wrote (it holds `capacity.json`,
/// no `runs.json`) renders it, as it renders the file itself.
#[test]
fn report_reads_a_capacity_results_folder_iolab_wrote() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("capacity-pool"), dir.path().join("capacity.json")).unwrap();
    let out = iolab().arg("report").arg(dir.path()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The numbers in the text are the fixture's own: its capacity, its threads named.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("capacity-pool")).unwrap()).unwrap();
    let capacity = doc["capacity_rps"].as_f64().unwrap();
    let resource = doc["searches"][0]["fit"]["binding"]["resource"]
        .as_str()
        .unwrap();
    assert!(
        text.contains(&format!("capacity {capacity:.0}/s"))
            && text.contains(&format!("binding resource: {resource}")),
        "{text}"
    );
    // A folder with neither names the documents it looked for.
    let empty = tempfile::tempdir().unwrap();
    let out = iolab().arg("report").arg(empty.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("'iolab run' or 'iolab capacity'"), "{err}");
}

/// `--png` draws a capacity document's charts (p99 and success against the rate).
#[test]
fn png_of_a_capacity_document_draws_its_charts() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("png");
    let out = iolab()
        .arg("report")
        .arg(fixture("capacity-pool"))
        .arg("--png")
        .arg(&png)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(&png)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["url-p99-vs-rate.png", "url-success-vs-rate.png"]);
    for n in &names {
        let bytes = std::fs::read(png.join(n)).unwrap();
        assert!(
            iolab_report::distinct_colours(&bytes).unwrap() >= 8,
            "{n} is blank"
        );
    }
}
