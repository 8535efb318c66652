//! Issue 49 (hostile round 4), through the binary: the live page and merge,
//! capacity's verdicts, hostile documents, `iolab serve` and `k8s`. Each
//! test is named `r38_N_*` after its finding and meets a real misbehaving
//! peer on 127.0.0.1:0 or a real hostile file. The HTTP/2 and gRPC findings
//! are in crates/loadgen/tests/hostile_round4.rs and crates/verify's.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

fn iolab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
}

/// One line on stderr, exit 2, naming `why`, and no panic.
fn refused(out: &Output, why: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(why) && err.trim_end().lines().count() == 1,
        "{why}: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// Two real shard documents of one plan (made once per test binary):
/// `iolab attack --shard i/2` against `iolab serve`.
fn shards() -> &'static (tempfile::TempDir, Vec<Value>) {
    static SHARDS: OnceLock<(tempfile::TempDir, Vec<Value>)> = OnceLock::new();
    SHARDS.get_or_init(|| {
        let target = common::serve(&["--model", "loop-async"]);
        let url = format!("{}/work?steps=sleep:1", target.url);
        let tmp = tempfile::tempdir().unwrap();
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        let at = format!("{:.3}", now.as_secs_f64() + 1.5);
        let children: Vec<_> = (1..=2)
            .map(|i| {
                iolab()
                    .args(["attack", &url, "--rate", "100", "-d", "1s", "-q"])
                    .args(["--shard", &format!("{i}/2"), "--start-at", &at])
                    .arg("--out")
                    .arg(tmp.path().join(format!("s{i}.json")))
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        let docs = (1..=2)
            .map(|i| {
                let bytes = std::fs::read(tmp.path().join(format!("s{i}.json"))).unwrap();
                serde_json::from_slice(&bytes).unwrap()
            })
            .collect();
        (tmp, docs)
    })
}

/// Shard documents edited by `edit` (given the index 0 or 1 and the
/// document), written to a fresh folder; their paths.
fn edited(dir: &Path, edit: impl Fn(usize, &mut Value)) -> Vec<PathBuf> {
    shards()
        .1
        .iter()
        .enumerate()
        .map(|(i, doc)| {
            let mut doc = doc.clone();
            edit(i, &mut doc);
            let path = dir.join(format!("e{i}.json"));
            std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
            path
        })
        .collect()
}

fn merge(paths: &[PathBuf]) -> Output {
    iolab().arg("merge").args(paths).output().unwrap()
}

/// Issue 49 finding 11: a 70-byte histogram announcing 0x7fffffff bytes
/// took `merge` to 2.1 GB before it was refused; now the header is held to
/// the bytes that follow it.
#[test]
fn r38_11_a_histogram_announcing_2_gib_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let mut bomb = 0x1c84_9314u32.to_be_bytes().to_vec();
    bomb.extend(0x7fff_ffffu32.to_be_bytes());
    bomb.extend([0u8; 62]);
    let b64 = base64_encode(&bomb);
    let paths = edited(tmp.path(), |i, d| {
        if i == 0 {
            d["histogram"] = Value::String(b64.clone());
        }
    });
    let started = Instant::now();
    let out = merge(&paths);
    refused(&out, "announces 2147483647 bytes and holds 62");
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// Issue 49 finding 15: a shard whose histogram is null merged into
/// percentiles of 50 of 100 requests, exit 0.
#[test]
fn r38_15_a_shard_without_its_histogram_does_not_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let paths = edited(tmp.path(), |i, d| {
        if i == 1 {
            d["histogram"] = Value::Null;
        }
    });
    refused(&merge(&paths), "latency histogram holds 0 answers");
    let whole = edited(tmp.path(), |_, _| {});
    common::assert_ok(&merge(&whole));
}

/// Issue 49 finding 20: a shard claiming index 0 or 5 of 2 was reported as
/// "shard 2 of 2 missing"; shards of different intervals merged silently.
#[test]
fn r38_20_an_impossible_index_or_mixed_intervals_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    for bad in [0, 5] {
        let paths = edited(tmp.path(), |i, d| {
            if i == 1 {
                d["shard"]["index"] = bad.into();
            }
        });
        refused(
            &merge(&paths),
            &format!("claims to be shard {bad} of 2: an index runs 1 to n"),
        );
    }
    let paths = edited(tmp.path(), |i, d| {
        if i == 1 {
            d["shard"]["interval_s"] = 2.5.into();
        }
    });
    refused(&merge(&paths), "shards of one plan share --interval");
    let paths = edited(tmp.path(), |i, d| {
        if i == 1 {
            d["shard"]["plan_requests"] = 7.into();
        }
    });
    refused(&merge(&paths), "record different plans");
}

fn base64_encode(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// What a fake page writes on a connection.
type Answer = fn(&mut TcpStream);

/// A peer on 127.0.0.1:0 answering every connection with `answer` (after
/// reading the request head); its URL.
fn page(answer: Answer) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = s.read(&mut buf);
                answer(&mut s);
            });
        }
    });
    url
}

fn ok_json(s: &mut TcpStream, body: &str) {
    let _ = write!(
        s,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// `iolab merge --live URL`: exit 2 and one line naming `why` within `within`.
fn merge_live_refuses(url: &str, why: &str, within: Duration) {
    let started = Instant::now();
    let mut child = iolab()
        .args(["merge", "--live=127.0.0.1:0", url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > within {
            let _ = child.kill();
            panic!("merge --live {url} ({why}) still running after {within:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.trim_end().lines().last().unwrap_or("");
    assert_eq!(out.status.code(), Some(2), "{why}: {err}");
    assert!(last.contains(why) && last.contains(url), "{why}: {err}");
}

/// Issue 49 finding 10: `merge --live` never ended on a page answering
/// garbage, redirecting, of the wrong schema, nested deeply, holding NaN or
/// sending 1 GB; now five such answers in a row end it naming the page.
#[test]
fn r38_10_merge_live_ends_on_a_page_that_is_no_shard() {
    let cases: [(Answer, &str); 6] = [
        (
            |s| {
                let _ = s.write_all(b"\x00\x01garbage\r\n\r\n");
            },
            "not an HTTP answer",
        ),
        (
            |s| {
                let _ = s.write_all(b"HTTP/1.1 302 Found\r\nLocation: http://example.com/\r\nContent-Length: 0\r\n\r\n");
            },
            "answered 302",
        ),
        (
            |s| ok_json(s, r#"{"schema":"other/1"}"#),
            "not an iolab live state",
        ),
        (
            |s| ok_json(s, &format!("{}{}", "[".repeat(5000), "]".repeat(5000))),
            "not an iolab live state",
        ),
        (
            |s| ok_json(s, r#"{"finished": NaN}"#),
            "not an iolab live state",
        ),
        (
            |s| {
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n");
                let chunk = vec![b'['; 1 << 16];
                for _ in 0..(1 << 14) {
                    if s.write_all(&chunk).is_err() {
                        return;
                    }
                }
            },
            "not an HTTP answer",
        ),
    ];
    let handles: Vec<_> = cases
        .into_iter()
        .map(|(answer, why)| {
            let url = page(answer);
            std::thread::spawn(move || merge_live_refuses(&url, why, Duration::from_secs(30)))
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// Issue 49 finding 10: a page that hangs (or is gone) ended nothing; now
/// 30 s without a state end the merge naming the page and the fix.
#[test]
fn r38_10_merge_live_ends_on_a_page_that_hangs() {
    let url = page(|_| std::thread::sleep(Duration::from_secs(120)));
    merge_live_refuses(&url, "no state for 30 s", Duration::from_secs(60));
}

/// Issue 49 finding 23: `iolab serve --model pool --threads 8` stopped
/// answering `/health` for about 20 s while 12 clients trickled a request
/// head a byte a second (a worker held per slow head). Now a head not whole
/// goes back to the poller with its bytes.
#[test]
fn r38_23_slow_heads_hold_no_pool_worker() {
    let target = common::serve(&["--model", "pool", "--threads", "8"]);
    let addr = target.url.strip_prefix("http://").unwrap().to_string();
    let slow: Vec<TcpStream> = (0..12)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    let trickle = std::thread::spawn(move || {
        let head = b"GET /health HTTP/1.1\r\nHost: x\r\n";
        for b in head.iter().take(6) {
            for mut s in &slow {
                let _ = s.write_all(&[*b]);
            }
            std::thread::sleep(Duration::from_secs(1));
        }
        slow
    });
    std::thread::sleep(Duration::from_millis(1500));
    for _ in 0..3 {
        let started = Instant::now();
        let (status, _) = common::get(&target.url, "/health").unwrap();
        assert!(status.contains("200"), "{status}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "/health took {:?} beside 12 slow heads",
            started.elapsed()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    drop(trickle.join().unwrap());
}

/// Issue 49 finding 24: a request with two `Host` headers was answered 200
/// (RFC 9112 3.2: 400), by every model.
#[test]
fn r38_24_two_host_headers_are_a_400() {
    for model in ["pool", "loop-async"] {
        let target = common::serve(&["--model", model]);
        let addr = target.url.strip_prefix("http://").unwrap();
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 400"), "{model}: {answer}");
    }
}

/// Start `iolab ARGS` under `ulimit -n NOFILE`; the live page's URL read
/// from its stderr (the rest of stderr drained in the background).
fn live_limited(nofile: u32, args: &[&str]) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -n {nofile} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while err.read_line(&mut line).unwrap() > 0 {
        if let Some(rest) = line.strip_prefix("live: ") {
            let url = rest.split_whitespace().next().unwrap().to_string();
            std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
            return (child, url.trim_end_matches('/').to_string());
        }
        line.clear();
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("no live URL on stderr: {line}");
}

/// Issue 49 finding 13: the live page had no connection cap and shares the
/// generator's descriptors: under `ulimit -n 256`, 230 idle connections to
/// it turned a clean run into 2,145 `fd_limit` errors. Now it holds at most
/// 64 and closes the rest on accept.
#[test]
fn r38_13_idle_readers_of_the_live_page_leave_the_load_its_descriptors() {
    let target = common::serve(&["--model", "loop-async"]);
    let url = format!("{}/work?steps=sleep:100", target.url);
    let (child, page) = live_limited(
        256,
        &[
            "attack",
            &url,
            "--rate",
            "400",
            "-d",
            "3s",
            "--json",
            "-q",
            "--live=127.0.0.1:0",
        ],
    );
    let addr = page.strip_prefix("http://").unwrap().to_string();
    let idle: Vec<TcpStream> = (0..230)
        .filter_map(|_| TcpStream::connect(&addr).ok())
        .collect();
    let out = child.wait_with_output().unwrap();
    drop(idle);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    assert_eq!(
        doc["errors"]["fd_limit"].as_u64().unwrap_or(0),
        0,
        "{}",
        doc["errors"]
    );
    assert_eq!(
        doc["requests"]["ok"], doc["requests"]["sent"],
        "{}",
        doc["errors"]
    );
}

/// Issue 49 finding 14: `run --live=PORT --dry-run` exited 0 while PORT was
/// busy, and the real run was refused. The dry run now binds it too.
#[test]
fn r38_14_a_dry_run_is_refused_a_busy_live_port() {
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let preset = common::root().join("presets/test/tiny.toml");
    let out = iolab()
        .arg("run")
        .arg(&preset)
        .args(["--dry-run", &format!("--live=127.0.0.1:{port}")])
        .output()
        .unwrap();
    refused(&out, &format!("port {port} is in use"));
    let free = iolab()
        .arg("run")
        .arg(&preset)
        .args(["--dry-run", "--live=127.0.0.1:0"])
        .output()
        .unwrap();
    common::assert_ok(&free);
}

/// Issue 49 finding 19: documents read back were not held to what a run can
/// produce: a `--baseline` of capacity 0 passed ("inf% above"), -50 printed
/// as 0, 1e308 as 18,446,744,073,709,551,615/s; an attack with a negative
/// `elapsed_s` or a p50 above its max rendered ("Duration -5000.00ms").
#[test]
fn r38_19_documents_with_impossible_figures_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let url = "http://127.0.0.1:1/work?steps=sleep:50";
    let slo = "p99<200ms";
    for capacity in [0.0, -50.0, 1e308] {
        let doc = serde_json::json!({
            "schema": "iolab.capacity/1", "name": "capacity", "capacity_rps": capacity,
            "slo": {"clauses": [{"kind": "latency", "percentile": 99.0, "below_ms": 200.0}]},
            "searches": [{
                "name": "url", "target": url, "step_rule": "", "steps": [],
                "capacity_rps": capacity, "failed_rps": 110.0, "bracket_width_pct": 10.0,
                "outcome": "converged", "elapsed_s": 1.0
            }],
            "started_utc": "2026-11-24T00:00:00Z"
        });
        let path = dir.path().join("baseline.json");
        std::fs::write(&path, doc.to_string()).unwrap();
        let report = iolab().arg("report").arg(&path).output().unwrap();
        refused(&report, "a capacity is a rate above 0");
        let out = iolab()
            .args(["capacity", url, "--slo", slo, "--baseline"])
            .arg(&path)
            .arg("--out")
            .arg(dir.path().join("out"))
            .output()
            .unwrap();
        refused(&out, "holds a figure no search finds");
        assert!(!dir.path().join("out").exists(), "measured");
    }
    let tmp = tempfile::tempdir().unwrap();
    let shard = &shards().1[0];
    for (field, value, needle) in [
        ("elapsed_s", -5.0, "elapsed_s is -5"),
        ("p50", 1e6, "latency_ms.p50 is 1000000"),
    ] {
        let mut doc = shard.clone();
        match field {
            "p50" => doc["latency_ms"]["p50"] = value.into(),
            f => doc[f] = value.into(),
        }
        let path = tmp.path().join("attack.json");
        std::fs::write(&path, doc.to_string()).unwrap();
        let out = iolab().arg("report").arg(&path).output().unwrap();
        refused(&out, needle);
    }
}

/// Issue 49 findings 22 and 12: `k8s --cpu banana`, `--storage banana`,
/// `--namespace 'Not Valid!'` and `--image ''` wrote manifests kubectl
/// refuses later; `--name $'x\nkind: Secret'` was a two-line error.
#[test]
fn r38_22_k8s_flags_are_checked_as_kubernetes_does() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("job.yaml");
    let k8s = |flags: &[&str]| {
        iolab()
            .args(["k8s", "--shards", "2", "-o"])
            .arg(&out_file)
            .args(flags)
            .args(["--", "http://svc:8080/", "--rate", "10", "-d", "5s"])
            .output()
            .unwrap()
    };
    for (flags, needle) in [
        (
            &["--cpu", "banana", "--image", "r/i:1"][..],
            "--cpu 'banana': a CPU quantity",
        ),
        (
            &["--storage", "banana", "--image", "r/i:1"][..],
            "--storage 'banana': a size",
        ),
        (
            &["--namespace", "Not Valid!", "--image", "r/i:1"][..],
            "--namespace 'Not Valid!'",
        ),
        (&["--image", ""][..], "--image '': give the image"),
        (
            &["--name", "x\nkind: Secret", "--image", "r/i:1"][..],
            "--name 'x\\nkind: Secret'",
        ),
    ] {
        refused(&k8s(flags), needle);
        assert!(!out_file.exists(), "{flags:?}: a manifest was written");
    }
    common::assert_ok(&k8s(&[
        "--cpu",
        "500m",
        "--namespace",
        "load-test",
        "--image",
        "r/i:1",
    ]));
    assert!(out_file.is_file());
}

/// Issue 49 finding 12: a document's `target` holding clear-screen and bell
/// was printed raw by `report`, and the control bytes of `--slo` echoed.
#[test]
fn r38_12_outside_text_reaches_the_terminal_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let mut doc = shards().1[0].clone();
    doc["target"] = "http://127.0.0.1:1/\u{1b}[2J\u{7}".into();
    let path = tmp.path().join("attack.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let out = iolab().arg("report").arg(&path).output().unwrap();
    common::assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
    assert!(text.contains("\\u{1b}[2J"), "{text}");
    let out = iolab()
        .args(["attack", "http://127.0.0.1:1/", "--rate", "1", "-d", "1s"])
        .args(["--slo", "p99<\u{1b}[2J\nsecond line\u{7}"])
        .output()
        .unwrap();
    refused(&out, "objective 'p99<\\u{1b}[2J\\nsecond line\\u{7}'");
    let capacity = serde_json::json!({
        "schema": "iolab.capacity/1", "name": "capacity", "capacity_rps": 100.0,
        "slo": {"clauses": [{"kind": "latency", "percentile": 99.0, "below_ms": 200.0}]},
        "searches": [{
            "name": "url", "target": "http://x/\u{1b}[2J\u{7}", "step_rule": "", "steps": [],
            "capacity_rps": 100.0, "failed_rps": 110.0, "bracket_width_pct": 10.0,
            "outcome": "converged", "elapsed_s": 1.0
        }],
        "started_utc": "2026-11-24T00:00:00Z"
    });
    std::fs::write(&path, capacity.to_string()).unwrap();
    let out = iolab().arg("report").arg(&path).output().unwrap();
    common::assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains('\u{1b}') && text.contains("\\u{1b}[2J"),
        "{text}"
    );
}

/// Issue 49 finding 21: `whatif whatif-cpu --scale 1e-300` blamed the
/// preset's `load.rate` (a 300-digit rate) for the flag the user typed.
#[test]
fn r38_21_a_scale_too_small_is_blamed_on_the_flag() {
    for cmd in [
        &["whatif", "presets/whatif-cpu.toml"][..],
        &["run", "presets/test/tiny.toml", "--dry-run"][..],
    ] {
        let out = iolab()
            .current_dir(common::root())
            .args(cmd)
            .args(["--scale", "1e-300"])
            .output()
            .unwrap();
        refused(
            &out,
            "--scale 1e-300 makes load.rate above the most iolab sends",
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.len() < 200 && !err.contains("toml:"), "{err}");
    }
}

/// A keep-alive HTTP/1.1 server on 127.0.0.1:0 answering request n (from 0,
/// across connections) with `status(n)`; `None` closes every connection and
/// the port for good (a target that dies).
fn http_server(status: fn(u64) -> Option<u16>) -> String {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
    use std::sync::Arc;
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    let (count, dead) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    std::thread::spawn(move || {
        for s in l.incoming() {
            if dead.load(SeqCst) {
                return; // the listener is dropped: refused from now on
            }
            let Ok(mut s) = s else { continue };
            let (count, dead) = (count.clone(), dead.clone());
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match s.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                    buf.drain(..end);
                    let Some(code) = status(count.fetch_add(1, SeqCst)) else {
                        dead.store(true, SeqCst);
                        // Wake the acceptor so it drops the listener.
                        let _ = TcpStream::connect(s.local_addr().unwrap());
                        return;
                    };
                    let head = format!("HTTP/1.1 {code} X\r\nContent-Length: 0\r\n\r\n");
                    if s.write_all(head.as_bytes()).is_err() || dead.load(SeqCst) {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// `iolab capacity URL --json` with a short search; its exit code and document.
fn capacity(url: &str, extra: &[&str]) -> (Option<i32>, Value, String) {
    let out_dir = tempfile::tempdir().unwrap();
    let out = iolab()
        .args(["capacity", url, "--slo", "p99<200ms,success>=99%", "--json"])
        .args(["--min-step", "300ms", "--quiet", "--out"])
        .arg(out_dir.path().join("c"))
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    (out.status.code(), doc, err)
}

/// Issue 49 finding 17: a target dead from the start printed p50/p99 "0s"
/// per step and exited 0; one dying mid-search got "capacity 100/s" and a
/// binding. Now it is said, and neither is claimed.
#[test]
fn r38_17_a_dead_target_is_said_and_gets_no_capacity() {
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", closed.local_addr().unwrap());
    drop(closed);
    let (code, doc, err) = capacity(&url, &["--max-steps", "4"]);
    let s = &doc["searches"][0];
    assert_eq!(code, Some(1), "{err}");
    assert!(
        s["outcome"]
            .as_str()
            .unwrap()
            .contains("answered no request at any rate"),
        "{s}"
    );
    assert!(s["outcome"].as_str().unwrap().contains("refused"), "{s}");
    assert!(s["capacity_rps"].is_null(), "{s}");
    assert_eq!(
        s["steps"].as_array().unwrap().len(),
        1,
        "one step tells: {s}"
    );
    assert!(err.contains("answered no request"), "{err}");
    // Alive for its first 300 requests, then gone.
    let url = http_server(|n| (n < 300).then_some(200));
    let (_, doc, err) = capacity(&url, &["--max-steps", "8"]);
    let s = &doc["searches"][0];
    let outcome = s["outcome"].as_str().unwrap();
    assert!(outcome.contains("stopped answering at"), "{outcome}: {err}");
    assert!(s["capacity_rps"].is_null() && s["fit"].is_null(), "{s}");
}

/// Issue 49 finding 18: a target failing 50% of requests at any rate got
/// "capacity 1.6/s" from a one-request step, blamed on its event loop.
#[test]
fn r38_18_a_target_failing_at_every_rate_is_said() {
    let url = http_server(|n| Some(if n % 2 == 0 { 200 } else { 500 }));
    let (_, doc, err) = capacity(&url, &["--start", "400", "--max-steps", "4"]);
    let s = &doc["searches"][0];
    let outcome = s["outcome"].as_str().unwrap();
    assert!(
        s["capacity_rps"].is_null(),
        "no capacity from a target failing half its requests: {s}: {err}"
    );
    assert!(
        outcome.contains("the target fails at every rate: at best 5"),
        "{outcome}"
    );
    assert!(s["fit"].is_null(), "{s}");
}

/// Issue 49 finding 16: `capacity --pid 1` was accepted and its fit read
/// the whole machine; a `--pid` that exits mid-search got no note.
#[test]
fn r38_16_a_pid_that_is_the_machine_or_exits_is_said() {
    let url = http_server(|_| Some(200));
    for (pid, needle) in [
        ("1".to_string(), "--pid 1 is init"),
        (
            std::process::id().to_string(),
            "the shell that started iolab",
        ),
    ] {
        let out = iolab()
            .args(["capacity", &url, "--pid", &pid, "--max-steps", "2"])
            .output()
            .unwrap();
        refused(&out, needle);
    }
    let mut child = Command::new("sleep").arg("4").spawn().unwrap();
    let pid = child.id().to_string();
    let (_, doc, err) = capacity(&url, &["--pid", &pid, "--start", "200", "--max-steps", "6"]);
    let _ = child.wait();
    let notes = doc["searches"][0]["notes"].to_string();
    assert!(
        notes.contains(&format!("--pid {pid} exited during the search")),
        "{notes}: {err}"
    );
}
