//! Replay inputs (`iolab attack --replay`), read by the library: the HAR
//! fixture and combined logs become endpoints with shares, and every kind
//! of bad input is refused in one line naming the file, the line or entry
//! and the fix (or, with `--skip-bad`, counted).

use std::path::{Path, PathBuf};

use iolab_loadgen::replay::{self, timeline, Format, Options, ReplayError, Safety};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay/shop.har")
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn one_line(e: &ReplayError, file: &Path, words: &[&str]) -> String {
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    assert!(msg.contains(&file.display().to_string()), "{msg}");
    for w in words {
        assert!(msg.contains(w), "missing '{w}': {msg}");
    }
    msg
}

const LOG: &str = "127.0.0.1 - - [28/Nov/2026:20:14:08 +0000] \"GET /api/orders/1 HTTP/1.1\" 200 5 \"-\" \"curl/8\" 0.010\n\
127.0.0.1 - - [28/Nov/2026:20:14:08 +0000] \"GET /api/orders/2 HTTP/1.1\" 200 5 \"-\" \"curl/8\" 0.030\n\
127.0.0.1 - - [28/Nov/2026:20:14:09 +0000] \"GET /health HTTP/1.1\" 200 2 \"-\" \"curl/8\" 0.001\n";

#[test]
fn the_har_fixture_becomes_endpoints_with_shares_and_no_credentials() {
    let l = replay::load(&fixture(), &Options::default()).unwrap();
    assert_eq!(l.format, Format::Har);
    let eps: Vec<(&str, &str, u64)> = (l.mix.endpoints.iter())
        .map(|e| (e.method.as_str(), e.template.as_str(), e.recorded))
        .collect();
    assert_eq!(
        eps,
        [
            ("GET", "/api/products/{id}", 5),
            ("GET", "/api/cart", 3),
            ("GET", "/static/app.js", 1)
        ]
    );
    // The server's part of each entry's time (`timings.wait`), not the
    // whole `time` (12.5-21.5 ms in the fixture).
    assert_eq!(l.mix.endpoints[0].recorded_service_ms, Some(10.0));
    let line = l.mix.skipped_line().unwrap();
    assert!(
        line.contains("1 POST") && line.contains("cookie x9") && line.contains("authorization x9"),
        "{line}"
    );
    for s in &l.mix.sequence {
        let names: Vec<&str> = s.request.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["accept", "user-agent"], "{:?}", s.request);
        assert!(
            s.request.url.starts_with('/'),
            "the host is never kept: {}",
            s.request.url
        );
    }
    // The recorded times: 9 requests over two seconds, each sent once.
    let r = timeline::recorded(&l.mix, 1.0).unwrap();
    let planned: f64 = r.phases.iter().map(|p| p.planned()).sum();
    assert_eq!((r.list.len(), planned.floor()), (9, 9.0));
    assert_eq!(r.list[0].url, "/api/products/101");
}

#[test]
fn allow_writes_keeps_the_post_and_its_body() {
    let opts = Options {
        safety: Safety {
            allow_writes: true,
            keep_auth: vec!["authorization".into()],
        },
        ..Options::default()
    };
    let l = replay::load(&fixture(), &opts).unwrap();
    let post = l
        .mix
        .sequence
        .iter()
        .find(|s| s.request.method == "POST")
        .unwrap();
    assert_eq!(post.request.body, br#"{"product":101,"qty":1}"#);
    assert_eq!(
        post.request.header("content-type"),
        Some("application/json")
    );
    assert_eq!(
        post.request.header("authorization"),
        Some("Bearer secret-token")
    );
    assert_eq!(post.request.header("cookie"), None);
}

#[test]
fn a_combined_log_with_request_time_and_a_vegeta_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(&dir, "access.log", LOG);
    let l = replay::load(&f, &Options::default()).unwrap();
    assert_eq!(l.format, Format::Combined);
    assert_eq!(l.mix.endpoints[0].template, "/api/orders/{id}");
    let ms = l.mix.endpoints[0].recorded_service_ms.unwrap();
    assert!((ms - 20.0).abs() < 1e-9, "{ms}");
    let r = timeline::recorded(&l.mix, 2.0).unwrap();
    assert_eq!(r.phases.len(), 2);
    // Two requests in the first recorded second, sent in its half at 2x.
    assert!(
        (r.phases[0].from_rps - 4.0).abs() < 1e-6,
        "{:?}",
        r.phases[0]
    );
    assert_eq!(r.phases[0].duration.as_millis(), 500);
    let f = write(
        &dir,
        "targets.txt",
        "GET http://prod.example:80/a/7\n\nGET http://prod.example/b\n",
    );
    let l = replay::load(&f, &Options::default()).unwrap();
    assert_eq!(l.format, Format::Vegeta);
    assert_eq!(l.mix.endpoints[0].template, "/a/{id}");
    assert!(
        timeline::recorded(&l.mix, 1.0).is_none(),
        "no times: replayed at --rate"
    );
}

#[test]
fn malformed_har_no_url_and_binary_body_name_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(&dir, "cut.har", r#"{"log":{"entries":[{"request":"#);
    one_line(
        &replay::load(&f, &Options::default()).unwrap_err(),
        &f,
        &["not a HAR 1.2", "export it again"],
    );
    let no_url = r#"{"log":{"entries":[{"request":{"method":"GET","url":"https://h/a"}},{"request":{"method":"GET"}}]}}"#;
    let f = write(&dir, "nourl.har", no_url);
    one_line(
        &replay::load(&f, &Options::default()).unwrap_err(),
        &f,
        &["entry 2", "no URL", "--skip-bad"],
    );
    let binary = r#"{"log":{"entries":[{"request":{"method":"PUT","url":"https://h/up","postData":{"mimeType":"image/png","text":"iVBOR","encoding":"base64"}}}]}}"#;
    let f = write(&dir, "bin.har", binary);
    let opts = Options {
        safety: Safety {
            allow_writes: true,
            ..Safety::default()
        },
        ..Options::default()
    };
    one_line(
        &replay::load(&f, &opts).unwrap_err(),
        &f,
        &["entry 1", "binary body", "--skip-bad"],
    );
}

#[test]
fn unknown_format_lines_without_a_request_and_skip_bad_counts() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(&dir, "app.log", "\n2026-11-28 20:14:08 INFO started\n");
    one_line(
        &replay::load(&f, &Options::default()).unwrap_err(),
        &f,
        &["line 2", "--replay-format"],
    );
    let bad = format!(
        "{LOG}2026-11-28 20:14:08 INFO not a request\n127.0.0.1 - - [28/Nov/2026:20:14:09 +0000] \"-\" 400 0 \"-\" \"-\"\n"
    );
    let f = write(&dir, "mixed.log", &bad);
    one_line(
        &replay::load(&f, &Options::default()).unwrap_err(),
        &f,
        &["line 4", "combined log format", "--skip-bad"],
    );
    let opts = Options {
        skip_bad: true,
        ..Options::default()
    };
    let l = replay::load(&f, &opts).unwrap();
    assert_eq!((l.bad, l.mix.total), (2, 3));
    let line = l.bad_line(&f).unwrap();
    assert!(
        line.contains("left out 2 bad lines") && !line.contains('\n'),
        "{line}"
    );
    let f = write(
        &dir,
        "nothing.log",
        "127.0.0.1 - - [28/Nov/2026:20:14:09 +0000] \"-\" 400 0 \"-\" \"-\"\n",
    );
    let opts = Options {
        format: Some(Format::Combined),
        ..Options::default()
    };
    one_line(
        &replay::load(&f, &opts).unwrap_err(),
        &f,
        &["line 1", "no request"],
    );
    let f = write(&dir, "empty.log", "\n\n");
    one_line(
        &replay::load(&f, &Options::default()).unwrap_err(),
        &f,
        &["no requests"],
    );
}

#[test]
fn a_mix_of_writes_only_is_refused_naming_allow_writes() {
    let dir = tempfile::tempdir().unwrap();
    let log = "127.0.0.1 - - [28/Nov/2026:20:14:08 +0000] \"POST /api/orders HTTP/1.1\" 201 5 \"-\" \"curl/8\"\n\
               127.0.0.1 - - [28/Nov/2026:20:14:08 +0000] \"DELETE /api/orders/3 HTTP/1.1\" 204 0 \"-\" \"curl/8\"\n";
    let f = write(&dir, "writes.log", log);
    one_line(
        &replay::load(&f, &Options::default()).unwrap_err(),
        &f,
        &[
            "every request would be skipped",
            "1 DELETE, 1 POST",
            "--allow-writes",
        ],
    );
}

/// A 2 GiB HAR as a sparse file: refused from its size, never read.
#[test]
fn a_har_over_the_limit_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(&dir, "huge.har", r#"{"log":{"entries":["#);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let e = replay::load(&f, &Options::default()).unwrap_err();
    let limit = replay::har::MAX_HAR_BYTES.to_string();
    one_line(&e, &f, &["2147483648 bytes", &limit, "access log"]);
}

/// Found while writing the replay: at a speed whose seconds are not exact
/// in binary (3x: 1/3 s), a phase's area fell a hair short of its count
/// and the schedule's floor dropped the last recorded request.
#[test]
fn r53_1_every_recorded_request_is_scheduled_at_any_speed() {
    // 5 + 4 requests in two seconds; with the POST, 5 + 5 (one phase of
    // two seconds: its rate is still 5 a recorded second).
    for (allow_writes, n) in [(false, 9), (true, 10)] {
        let opts = Options {
            safety: Safety {
                allow_writes,
                ..Safety::default()
            },
            ..Options::default()
        };
        let l = replay::load(&fixture(), &opts).unwrap();
        for speed in [1.0, 2.0, 3.0, 7.0, 0.3, 10.0 / 3.0] {
            let r = timeline::recorded(&l.mix, speed).unwrap();
            let arrival = iolab_model::driver::Arrival::Constant;
            let s = iolab_model::schedule::Schedule::new(&r.phases, arrival);
            assert_eq!(s.count(), n, "speed {speed}");
            let secs: f64 = r.phases.iter().map(|p| p.duration.as_secs_f64()).sum();
            assert!((secs - 2.0 / speed).abs() < 1e-6, "speed {speed}: {secs} s");
        }
    }
}

/// A long recording whose every second differs would make a phase a second,
/// past the plan's limit: it is laid out in wider buckets, every request kept.
#[test]
fn r53_2_a_long_recording_fits_the_phase_limit() {
    use iolab_loadgen::replay::{MixBuilder, Recorded, Routes};
    let mut b = MixBuilder::new(Routes::default(), Safety::default());
    let mut n = 0;
    for second in 0..30_000u64 {
        for _ in 0..=(second * 7 % 3) {
            b.add(Recorded {
                method: "GET".into(),
                target: "/a".into(),
                at_ms: Some(1_700_000_000_000 + second * 1000),
                ..Recorded::default()
            });
            n += 1;
        }
    }
    let r = timeline::recorded(&b.finish(), 1.0).unwrap();
    assert!(
        r.phases.len() <= iolab_model::limits::MAX_PHASES,
        "{}",
        r.phases.len()
    );
    assert!(r.bucket_s > 1);
    let arrival = iolab_model::driver::Arrival::Constant;
    assert_eq!(
        iolab_model::schedule::Schedule::new(&r.phases, arrival).count(),
        n
    );
    let secs: f64 = r.phases.iter().map(|p| p.duration.as_secs_f64()).sum();
    assert!(
        secs >= 30_000.0 && secs < 30_000.0 + r.bucket_s as f64,
        "{secs}"
    );
}
