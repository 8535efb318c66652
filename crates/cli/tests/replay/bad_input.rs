//! Bad recordings through the binary: exit 2 with one line naming the
//! fault and the fix; `--skip-bad` loads the rest and says how many lines
//! it left out. (Every case in the library: `crates/loadgen/tests/replay_inputs.rs`.)

use super::{iolab, json_ok, servers, stderr};

#[test]
fn bad_recordings_exit_2_in_one_line_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let put = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
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
    // --skip-bad loads the rest and says how many lines it left out.
    let target = servers::recording();
    let out = iolab()
        .args(["attack", "--replay"])
        .arg(&cases[2].0)
        .args(["--base", &target.url, "--skip-bad", "--json"])
        .output()
        .unwrap();
    let doc = json_ok(&out);
    assert_eq!(doc["requests"]["ok"], 1);
    assert!(
        stderr(&out).contains("--skip-bad left out 1 bad lines"),
        "{}",
        stderr(&out)
    );
}
