//! `iolab capacity`'s flags for a noisy world end to end: `--repeat N` and
//! `--warm-up N` (issue 51): N searches of one URL, warmed once, the
//! document's answer their median with the interval over every run, the
//! machine watched through each; and bad input, one line and exit 2 (a
//! `--pid` whose service died among it).

mod common;

use common::serve;

use std::process::Command;

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

/// pool(4) at sleep:20: 4 / 0.02 s = 200 req/s, searched twice (short
/// steps, one window a rate: the test is about the repeat, not precision).
#[test]
fn two_searches_give_their_median_and_the_interval_over_both() {
    let s = serve(&["--model", "pool", "--threads", "4"]);
    let out_dir = tempfile::tempdir().unwrap();
    let out = iolab()
        .args(["capacity", &format!("{}/work?steps=sleep:20", s.url)])
        .args(["--slo", "p99<100ms,success>=99%", "--precision", "20%"])
        .args(["--start", "50", "--budget", "0%", "--min-step", "500ms"])
        .args([
            "--repeat",
            "2",
            "--warm-up",
            "100",
            "--json",
            "--quiet",
            "--out",
        ])
        .arg(out_dir.path())
        .output()
        .unwrap();
    let doc = common::json_ok(&out);
    common::assert_capacity_schema(&doc);
    let searches = doc["searches"].as_array().unwrap();
    let names: Vec<&str> = searches
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    // Named by the service's host, port and path (issue 50: not "url").
    let host = s.url.strip_prefix("http://").unwrap();
    assert_eq!(
        names,
        [format!("{host}/work #1"), format!("{host}/work #2")]
    );
    // Warmed once, before the first: 100 requests at --start's 50/s, no PID
    // to judge it steady by.
    let warmed = |s: &serde_json::Value| {
        s["notes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n.as_str().unwrap().starts_with("warmed first: "))
            .cloned()
    };
    let note = warmed(&searches[0]).expect("the first search was warmed");
    assert!(
        note.as_str().unwrap().contains("its CPU not read"),
        "{note}"
    );
    assert!(warmed(&searches[1]).is_none());
    let caps: Vec<f64> = searches
        .iter()
        .map(|s| s["capacity_rps"].as_f64().expect("each run found one"))
        .collect();
    let r = &doc["repeat"];
    assert_eq!(r["runs"], 2);
    let median = (caps[0] + caps[1]) / 2.0;
    assert!(
        (r["median_rps"].as_f64().unwrap() - median).abs() < 1e-9,
        "{r}"
    );
    assert_eq!(doc["capacity_rps"].as_f64(), Some(median));
    let hi = caps[0].max(caps[1]) / caps[0].min(caps[1]);
    assert!(
        (r["max_over_min"].as_f64().unwrap() - hi).abs() < 1e-9,
        "{r}"
    );
    // The interval over both reaches every run's interval.
    let (low, high) = (
        doc["interval"]["low_rps"].as_f64().unwrap(),
        doc["interval"]["high_rps"].as_f64().unwrap(),
    );
    for s in searches {
        assert!(
            s["interval"]["low_rps"].as_f64().unwrap() >= low - 1e-9,
            "{s}"
        );
        assert!(
            s["interval"]["high_rps"].as_f64().unwrap() <= high + 1e-9,
            "{s}"
        );
        // The machine was watched through each search.
        assert!(
            s["machine"]["generator_cpu"]["timings"].as_u64().unwrap() >= 10,
            "{s}"
        );
        assert_eq!(s["machine"]["asked_pct"], 20.0);
    }
    assert!(
        (median - 200.0).abs() <= 0.3 * 200.0,
        "median {median} vs 4 / 20 ms = 200"
    );
    // The saved document re-renders with the line the test recomputes.
    let text = report_text(&out_dir);
    assert!(text.contains("2 searches: "), "{text}");
}

#[test]
fn bad_repeats_are_one_line_and_exit_2() {
    for (args, says) in [
        (vec!["--repeat", "0"], "--repeat 0: give 1 to 20"),
        (vec!["--repeat", "21"], "--repeat 21: give 1 to 20"),
        (vec!["--repeat", "x"], "--repeat"),
    ] {
        let out = iolab()
            .args(["capacity", "http://127.0.0.1:1/"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let out = iolab()
        .current_dir(common::root())
        .args(["capacity", "presets/test/tiny.toml", "--repeat", "2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--repeat repeats the search of one URL"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// Issue 50 finding 7: a `--pid` whose service died before the search (a
/// zombie: a port clash, its parent not yet reaping it) was accepted, and
/// the search read no CPU and named "threads (medium)". It is refused,
/// saying the process exited; a PID that never was says so too.
#[test]
fn r50_7_a_zombie_pid_is_said_to_have_exited() {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    // Not waited for: a zombie until `wait` below.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("State:") && l.contains('Z'))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "{pid} never became a zombie"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for (pid, says) in [
        (pid.to_string(), "has exited (its parent has not reaped it)"),
        ("999999999".to_string(), "is no running process"),
    ] {
        let out = iolab()
            .args(["capacity", "http://127.0.0.1:1/", "--pid", &pid])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("--pid {pid} {says}")), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    child.wait().unwrap();
}

/// Issue 51: a CPU hog on a pinned target's core through the search. The
/// target's cores are read from its PID's affinity, the search kept off
/// them, and what the hog took is named and reaches the interval up: the
/// event loop on CPU 0 at cpu:300000 a request (about 2 ms) serves about
/// half its own rate beside a busy loop there.
#[test]
fn r51_10_a_hog_on_the_pinned_targets_core_is_named_and_widens_the_interval() {
    if iolab_lab::environment::allowed_cpus().len() < 2 {
        eprintln!("skipped: one CPU, nothing to keep the search off the target's");
        return;
    }
    let s = serve(&["--model", "loop-async", "--workers", "1", "--cpus", "0"]);
    let out_dir = tempfile::tempdir().unwrap();
    let mut hog = Command::new("taskset")
        .args(["-c", "0", "sh", "-c", "while :; do :; done"])
        .spawn()
        .expect("taskset (util-linux)");
    let out = iolab()
        .args(["capacity", &format!("{}/work?steps=cpu:300000", s.url)])
        .args(["--slo", "p99<100ms,success>=99%", "--precision", "20%"])
        .args(["--start", "20", "--budget", "0%", "--min-step", "500ms"])
        .args(["--max-steps", "6", "--pid", &s.child.id().to_string()])
        .args(["--json", "--quiet", "--out"])
        .arg(out_dir.path())
        .output()
        .unwrap();
    let _ = hog.kill();
    let _ = hog.wait();
    let doc = common::json_ok(&out);
    common::assert_capacity_schema(&doc);
    let s0 = &doc["searches"][0];
    let notes = s0["notes"].to_string();
    assert!(
        notes.contains("the target is pinned to CPU 0: the search ran on CPU 1"),
        "{notes}"
    );
    let n = &s0["machine"]["neighbours"];
    let took = n["took_pct"].as_f64().expect("the hog was read");
    assert!(
        took >= 25.0,
        "a busy loop beside a busy target took {took}%: {n}"
    );
    let reach = (took / 100.0).min(0.99) / (1.0 - (took / 100.0).min(0.99));
    let (cap, high) = (
        s0["capacity_rps"]
            .as_f64()
            .expect("20/s passes beside a hog"),
        s0["interval"]["high_rps"].as_f64().unwrap(),
    );
    assert!(high >= cap * (1.0 + reach), "{cap} {high} {reach}");
    assert_eq!(s0["machine"]["asked_pct"], 20.0);
}

/// A short search of `url`'s 20 ms sleep reading `metrics`, in at most
/// `steps` steps: its folder and document (schema checked).
fn short_search(url: &str, metrics: &str, steps: u32) -> (tempfile::TempDir, serde_json::Value) {
    let out_dir = tempfile::tempdir().unwrap();
    let out = iolab()
        .args(["capacity", &format!("{url}/work?steps=sleep:20")])
        .args(["--slo", "p99<100ms,success>=99%", "--precision", "20%"])
        .args(["--start", "50", "--budget", "0%", "--min-step", "500ms"])
        .args(["--max-steps", &steps.to_string(), "--metrics", metrics])
        .args(["--json", "--quiet", "--out"])
        .arg(out_dir.path())
        .output()
        .unwrap();
    let doc = common::json_ok(&out);
    common::assert_capacity_schema(&doc);
    (out_dir, doc)
}

/// `iolab report` of the capacity document in `dir`, as text.
fn report_text(dir: &tempfile::TempDir) -> String {
    let out = iolab()
        .args(["report"])
        .arg(dir.path().join("capacity.json"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A `/metrics` answering Micrometer's GC pause series as a JVM pausing
/// ten times a second for 5 ms each would (counters from its start), on a
/// real socket, until the test ends.
fn pausing_jvm_metrics() -> String {
    let t0 = std::time::Instant::now();
    series_server("/actuator/prometheus", move |_| {
        let n = (t0.elapsed().as_secs_f64() * 10.0).floor();
        format!(
            "jvm_gc_pause_seconds_count{{action=\"end of minor GC\",gc=\"G1 Young Generation\"}} {n}\n\
             jvm_gc_pause_seconds_sum{{action=\"end of minor GC\",gc=\"G1 Young Generation\"}} {}\n\
             jvm_gc_pause_seconds_max{{action=\"end of minor GC\",gc=\"G1 Young Generation\"}} 0.005\n",
            n * 0.005
        )
    })
}

/// A Prometheus endpoint at `path` on a real socket answering `body(k)` to
/// its `k`-th scrape (from 0), until the test ends.
fn series_server(path: &str, body: impl Fn(usize) -> String + Send + 'static) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}{path}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for (k, conn) in listener.incoming().take(10_000).enumerate() {
            let Ok(mut c) = conn else { continue };
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let body = body(k);
            let _ = write!(
                c,
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

/// Issue 51: the target's own pauses, read from its series at the start
/// and the end of the search, are said with their figures beside the
/// machine's noise.
#[test]
fn r51_11_the_targets_gc_pauses_are_read_from_its_series_and_said() {
    let s = serve(&["--model", "pool", "--threads", "4"]);
    let metrics = pausing_jvm_metrics();
    let (out_dir, doc) = short_search(&s.url, &metrics, 4);
    let p = &doc["searches"][0]["machine"]["pauses"];
    assert_eq!(p["what"], "the JVM's GC", "{p}");
    let (count, total, over) = (
        p["count"].as_f64().unwrap(),
        p["total_s"].as_f64().unwrap(),
        p["over_s"].as_f64().unwrap(),
    );
    assert!((count - over * 10.0).abs() <= 2.0, "{p}");
    assert!((total - count * 0.005).abs() < 1e-9, "{p}");
    let text = report_text(&out_dir);
    let said = format!(
        "the target paused {} times for the JVM's GC (",
        iolab_report::numbers::num(count, 0)
    );
    assert!(
        text.contains(&said) && text.contains("the longest 5.00ms"),
        "{text}"
    );
}

/// Node's event-loop delay (prom-client's `nodejs_eventloop_lag_max_seconds`)
/// is the longest since the last scrape and resets at each, so it is read
/// per step, not at the search's ends: a loop held 250 ms once (its 6th
/// scrape, in the search's first step) and about 4 ms otherwise is said held
/// up to 250 ms, at that step's rate, beside the machine's noise.
#[test]
fn r51_15_a_node_targets_event_loop_delay_is_read_per_step_and_said() {
    let s = serve(&["--model", "pool", "--threads", "4"]);
    let metrics = series_server("/metrics", |k| {
        let lag = if k == 5 { 0.25 } else { 0.004 };
        format!(
            "nodejs_eventloop_lag_seconds 0.001\nnodejs_eventloop_lag_max_seconds {lag}\n\
             nodejs_gc_duration_seconds_sum{{kind=\"minor\"}} 0.01\n\
             nodejs_gc_duration_seconds_count{{kind=\"minor\"}} 3\n"
        )
    });
    let (out_dir, doc) = short_search(&s.url, &metrics, 3);
    let s0 = &doc["searches"][0];
    let d = &s0["machine"]["loop_delay"];
    assert_eq!(d["series"], "nodejs_eventloop_lag_max_seconds", "{d}");
    assert_eq!(d["longest_s"], 0.25, "{d}");
    let at = d["at_rps"].as_f64().unwrap();
    let steps = s0["steps"].as_array().unwrap();
    let step = steps
        .iter()
        .find(|st| st["metrics"]["nodejs_eventloop_lag_max_seconds"] == 0.25)
        .expect("the step that read the delay");
    assert_eq!(step["rate_rps"].as_f64(), Some(at), "{step}");
    let text = report_text(&out_dir);
    let said = format!(
        "the target held its own event loop up to 250ms in a step (at {}/s",
        iolab_report::numbers::rate(at)
    );
    assert!(text.contains(&said), "{said}\n{text}");
}
