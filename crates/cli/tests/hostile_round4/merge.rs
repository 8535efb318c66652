//! Shard documents that lie and live pages that are no shard: `iolab merge` and `merge --live`.

use super::*;

/// Two real shard documents of one plan (made once per test binary):
/// `iolab attack --shard i/2` against `iolab serve`.
pub(crate) fn shards() -> &'static (tempfile::TempDir, Vec<Value>) {
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
