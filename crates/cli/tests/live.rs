//! `--live` end to end through the binary, against real servers on
//! 127.0.0.1: a busy port refused before any load, `iolab run --live`
//! filling the experiment's table run by run, and `iolab merge --live`
//! adding two shards' live pages exactly as `iolab merge` adds their files.
//! The browser and Prometheus are in `live_browser.rs`.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{assert_ok, get};

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

/// Start `iolab ARGS` and read the live page's URL from its stderr (the
/// rest of stderr is drained in the background).
fn live(args: &[&str]) -> (Child, String) {
    let mut child = iolab()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start iolab");
    let mut err = BufReader::new(child.stderr.take().expect("piped"));
    let mut line = String::new();
    while err.read_line(&mut line).unwrap() > 0 {
        if let Some(rest) = line.strip_prefix("live: ") {
            let url = rest.split_whitespace().next().unwrap();
            let url = url.trim_end_matches('/').to_string();
            std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
            return (child, url);
        }
        line.clear();
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    panic!("no live URL on stderr; exit {:?}", out.status.code());
}

fn wait_ok(child: Child) -> Vec<u8> {
    let out = child.wait_with_output().unwrap();
    assert_ok(&out);
    out.stdout
}

/// The target's own count of completed requests (its `/metrics`).
fn completed(target: &str) -> f64 {
    let (_, body) = get(target, "/metrics").unwrap();
    body.lines()
        .find_map(|l| l.strip_prefix("iolab_requests_completed_total "))
        .and_then(|v| v.trim().parse().ok())
        .expect("iolab_requests_completed_total")
}

/// A port someone holds: one line, exit 2, and the target never asked.
#[test]
fn a_busy_live_port_is_one_line_and_no_load() {
    let target = common::serve(&["--model", "loop-async"]);
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let before = completed(&target.url);
    let out = iolab()
        .args(["attack", &format!("{}/work?steps=sleep:5", target.url)])
        .args([
            "--rate",
            "50",
            "-d",
            "1s",
            &format!("--live=127.0.0.1:{port}"),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("port {port} is in use")), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(completed(&target.url), before, "load was sent");
}

/// `iolab run --live`: the page shows the run under way, the runs still to
/// come with their predictions, and the report's table filling in.
#[test]
fn run_live_fills_the_table_run_by_run() {
    let tmp = tempfile::tempdir().unwrap();
    let preset = concat!(env!("CARGO_MANIFEST_DIR"), "/../../presets/test/tiny.toml");
    let out = tmp.path().join("out");
    let (child, url) = live(&[
        "run",
        preset,
        "-q",
        "--out",
        out.to_str().unwrap(),
        "--live",
    ]);
    let (mut now, mut pending, mut filling) = (false, false, false);
    let until = Instant::now() + Duration::from_secs(90);
    while Instant::now() < until {
        let Ok((status, page)) = get(&url, "/") else {
            break; // the run is over and so is its page
        };
        assert!(status.contains("200"), "{status}");
        now |= page.contains("<h2>Now: ") && page.contains("p50 and p99 latency");
        pending |= page.contains("Still to run") && page.contains("success predicted");
        filling |= page.contains("id=\"table\"") && page.contains("Still to run");
        std::thread::sleep(Duration::from_millis(200));
    }
    wait_ok(child);
    assert!(now, "never saw the run under way");
    assert!(pending, "never saw the runs to come with predictions");
    assert!(filling, "never saw the table with runs still to come");
}

/// A start `secs` from now, as Unix seconds.
fn start_in(secs: f64) -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    format!("{:.3}", now.as_secs_f64() + secs)
}

/// Two shards' pages merged while they run show the merged percentiles;
/// once they end, the live merge is the merge of their files, exactly.
#[test]
fn merge_live_adds_two_shards_as_they_run() {
    let target = common::serve(&["--model", "loop-async"]);
    let url = format!("{}/work?steps=sleep:10", target.url);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let at = start_in(2.0);
    let shard = |i: u32| {
        let out = dir.join(format!("s{i}.json"));
        let shard = format!("{i}/2");
        live(&[
            "attack",
            &url,
            "--rate",
            "200",
            "-d",
            "3s",
            "--interval",
            "500ms",
            "--shard",
            &shard,
            "--start-at",
            &at,
            "-q",
            "--out",
            out.to_str().unwrap(),
            "--live",
        ])
    };
    let (s1, u1) = shard(1);
    let (s2, u2) = shard(2);
    let merged = dir.join("live.json");
    let (m, mu) = live(&[
        "merge",
        "--live",
        &u1,
        &u2,
        "--json",
        "--out",
        merged.to_str().unwrap(),
    ]);
    // While they send: the merger's state adds both shards.
    let mut mid = None;
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until && mid.is_none() {
        std::thread::sleep(Duration::from_millis(250));
        let Ok((status, body)) = get(&mu, "/state") else {
            continue;
        };
        if !status.contains("200") {
            continue;
        }
        let s: serde_json::Value = serde_json::from_str(&body).unwrap();
        let a = &s["attack"];
        if !s["finished"].as_bool().unwrap() && a["series"].as_array().unwrap().len() >= 2 {
            mid = Some(s.clone());
        }
    }
    let mid = mid.expect("a merged state while the shards sent");
    assert_eq!(mid["attack"]["merged"]["shards"], 2, "{mid}");
    assert!(
        mid["attack"]["latency_ms"]["p99"].as_f64().unwrap() >= 10.0,
        "{mid}"
    );
    let (_, page) = get(&mu, "/").unwrap();
    assert!(
        page.contains("added across the shards") && page.contains("shard 1/2"),
        "{page}"
    );
    wait_ok(s1);
    wait_ok(s2);
    let printed: serde_json::Value = serde_json::from_slice(&wait_ok(m)).unwrap();
    let files = iolab()
        .args(["merge", "--json"])
        .arg(dir.join("s1.json"))
        .arg(dir.join("s2.json"))
        .output()
        .unwrap();
    let from_files: serde_json::Value = common::json_ok(&files);
    assert_eq!(
        printed, from_files,
        "the live merge is the merge of the files"
    );
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&merged).unwrap()).unwrap();
    assert_eq!(saved, from_files);
    assert_eq!(from_files["requests"]["planned"], 600);
}

/// `iolab capacity --live`: the step under way, and the steps so far.
#[test]
fn capacity_live_lists_the_steps_so_far() {
    let target = common::serve(&["--model", "loop-async"]);
    let url = format!("{}/work?steps=sleep:5", target.url);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("cap");
    let (child, page_url) = live(&[
        "capacity",
        &url,
        "--slo",
        "p99<200ms",
        "--start",
        "50",
        "--max",
        "100",
        "--min-step",
        "500ms",
        "--max-step",
        "500ms",
        "--max-steps",
        "3",
        "-q",
        "--out",
        out.to_str().unwrap(),
        "--live",
    ]);
    let (mut step, mut listed) = (false, false);
    while let Ok((_, page)) = get(&page_url, "/") {
        step |= page.contains("measuring step") && page.contains("p50 and p99 latency");
        listed |= page.contains("Finished so far") && page.contains("step 1: 50 req/s");
        std::thread::sleep(Duration::from_millis(100));
    }
    wait_ok(child);
    assert!(step, "never saw a step under way");
    assert!(listed, "never saw the finished steps");
}
