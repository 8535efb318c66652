//! Bad recordings through the binary: exit 2 with one line naming the
//! fault and the fix; `--skip-bad` loads the rest and says how many lines
//! it left out. (Every case in the library: `crates/loadgen/tests/replay_inputs.rs`.)
//! Issue 53's list, each through the binary: a malformed HAR, a HAR of
//! 2 GB, a line in an unknown log format, a binary body, an entry with no
//! URL, a recording where every request would be skipped, and
//! `--skip-bad`'s count for a log and for a HAR.

use super::{iolab, json_ok, servers, stderr};

#[test]
fn bad_recordings_exit_2_in_one_line_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let put = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let huge = put("huge.har", "{\"log\": {\"entries\": [");
    // 2 GiB, sparse: refused from its size, never read.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&huge)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let entry = |req: &str| {
        format!("{{\"startedDateTime\": \"2026-11-28T20:14:08.000Z\", \"request\": {req}}}")
    };
    let har = |entries: &[String]| format!("{{\"log\": {{\"entries\": [{}]}}}}", entries.join(","));
    let get = entry(r#"{"method": "GET", "url": "https://shop.example.com/a/1"}"#);
    let no_url = entry(r#"{"method": "GET"}"#);
    let binary = entry(
        r#"{"method": "PUT", "url": "https://shop.example.com/up", "postData": {"mimeType": "image/png", "text": "iVBOR", "encoding": "base64"}}"#,
    );
    let ok_line = "127.0.0.1 - - [28/Nov/2026:20:14:08 +0000] \"GET /a/1 HTTP/1.1\" 200 5 \"-\" \"curl/8\" 0.001\n";
    let cases = [
        (
            put("app.log", "2026-11-28 INFO up\n"),
            vec![],
            "--replay-format",
        ),
        (
            put("cut.har", "{\"log\": {\"entries\": ["),
            vec![],
            "not a HAR 1.2",
        ),
        (
            put("mixed.log", &format!("{ok_line}garbage line\n")),
            vec![],
            "line 2",
        ),
        (
            put("writes.log", &ok_line.replace("GET", "DELETE")),
            vec![],
            "every request would be skipped",
        ),
        (
            put("vegeta.txt", "GET http://h/a\n"),
            vec![],
            "has no times",
        ),
        (
            put("ok.log", ok_line),
            vec!["--keep-auth", "x-api-key"],
            "--keep-auth x-api-key",
        ),
        (
            put("ok2.log", ok_line),
            vec!["--http2"],
            "--replay cannot take --http2",
        ),
        (
            put("ok3.log", ok_line),
            vec!["--speed", "0x"],
            "--speed '0x'",
        ),
        (
            put("ok4.log", ok_line),
            vec!["--rate", "10"],
            "needs --duration",
        ),
        (huge, vec![], "over the HAR limit"),
        (
            put("nourl.har", &har(&[get.clone(), no_url])),
            vec![],
            "entry 2: the request has no URL",
        ),
        (
            put("bin.har", &har(&[binary])),
            vec!["--allow-writes"],
            "entry 1: a binary body (image/png)",
        ),
    ];
    for (file, extra, word) in &cases {
        let out = iolab()
            .args(["attack", "--replay"])
            .arg(file)
            .args(["--base", "http://127.0.0.1:9"])
            .args(extra)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", file.display());
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(word), "{word}: {err}");
    }
    // --skip-bad loads the rest and says how many it left out: a log's bad
    // line, and a HAR's entry with no URL.
    let target = servers::recording();
    for (case, said) in [
        (2, "--skip-bad left out 1 bad lines"),
        (10, "--skip-bad left out 1 bad lines or entries"),
    ] {
        let out = iolab()
            .args(["attack", "--replay"])
            .arg(&cases[case].0)
            .args(["--base", &target.url, "--skip-bad", "--json"])
            .output()
            .unwrap();
        let doc = json_ok(&out);
        assert_eq!(doc["requests"]["ok"], 1);
        assert!(stderr(&out).contains(said), "{}", stderr(&out));
    }
}
