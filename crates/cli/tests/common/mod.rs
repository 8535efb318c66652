//! What every end-to-end test of the binary shares.
#![allow(dead_code)] // each test binary uses a different part of this

pub mod held;
pub mod whatif;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Output;
use std::time::Duration;

/// The repository's root (presets, runtimes, docs are read from it).
pub fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fail the test with the command's stderr unless it exited 0.
pub fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The stdout of a successful command, parsed as one JSON document.
pub fn json_ok(out: &Output) -> serde_json::Value {
    assert_ok(out);
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// Fail the test unless `doc` matches the committed `iolab.capacity/1`
/// schema, naming every mismatch and where.
pub fn assert_capacity_schema(doc: &serde_json::Value) {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../../schema/capacity.schema.json")).unwrap();
    let errors: Vec<String> = jsonschema::validator_for(&schema)
        .unwrap()
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

/// GET over a raw socket (`Connection: close`, 20 s read timeout): status
/// line and body.
pub fn get(url: &str, path: &str) -> std::io::Result<(String, String)> {
    let addr = url.strip_prefix("http://").unwrap();
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(20)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    Ok((
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    ))
}

/// Send `signal` (`"INT"`, `"TERM"`) to process `pid`, as a user's Ctrl-C or
/// a service manager would; fails the test if it cannot be delivered.
pub fn signal(pid: u32, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} {pid}");
}

/// A child `iolab` that prints its URL as its first stdout line (`serve`,
/// `backend http`); killed and reaped when dropped, so a failing test leaves
/// no server behind.
pub struct Running {
    pub child: std::process::Child,
    pub url: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `iolab ARGS...` (stderr discarded) and read the URL it prints first.
pub fn spawn_url(args: &[&str]) -> Running {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start iolab");
    let out = child.stdout.take().expect("piped stdout");
    let mut running = Running {
        child,
        url: String::new(),
    };
    BufReader::new(out)
        .read_line(&mut running.url)
        .expect("read the URL line");
    running.url = running.url.trim_end().to_string();
    running
}

/// `iolab serve --port 0 ARGS...`: a built-in model on a free port.
pub fn serve(args: &[&str]) -> Running {
    let mut all = vec!["serve", "--port", "0"];
    all.extend_from_slice(args);
    spawn_url(&all)
}

/// A preset's results, read back: `iolab run presets/test/NAME.toml
/// --quiet` into a fresh folder, kept until `tmp` drops.
pub struct PresetRun {
    pub tmp: tempfile::TempDir,
    /// The results folder (`runs.json`, `report.md`).
    pub out: std::path::PathBuf,
    pub file: iolab_model::runs::RunsFile,
}

/// Run `presets/test/NAME.toml` to its results; fails the test unless the
/// run exits 0 and writes a `runs.json`.
pub fn run_test_preset(name: &str) -> PresetRun {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    let preset = root().join(format!("presets/test/{name}.toml"));
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_iolab"))
        .arg("run")
        .arg(&preset)
        .args(["--quiet", "--out"])
        .arg(&out)
        .output()
        .expect("iolab runs");
    assert_ok(&run);
    let text = std::fs::read_to_string(out.join("runs.json")).expect("runs.json written");
    let file = serde_json::from_str(&text).expect("runs.json reads");
    PresetRun { tmp, out, file }
}

/// The endpoint of each of ten requests in a mix's shares (in tenths).
fn tenths(mix: &[(&str, &str, f64)]) -> Vec<usize> {
    let mut tenths = Vec::new();
    for (i, (_, _, share)) in mix.iter().enumerate() {
        tenths.extend(std::iter::repeat_n(i, (share * 10.0).round() as usize));
    }
    assert_eq!(tenths.len(), 10, "the shares are in tenths and add up to 1");
    tenths
}

/// A HAR 1.2 file of 100 entries in a mix's shares, interleaved every ten,
/// recorded against another host (the replay sends to `--base` only):
/// `(method, request target, share)`, the shares in tenths.
pub fn har(dir: &std::path::Path, mix: &[(&str, &str, f64)]) -> std::path::PathBuf {
    let tenths = tenths(mix);
    let entries: Vec<serde_json::Value> = (0..100)
        .map(|i| {
            let (m, p, _) = mix[tenths[i % 10]];
            serde_json::json!({
                "startedDateTime": format!("2026-11-28T20:{:02}:{:02}.000Z", i / 60, i % 60),
                "time": 1.0,
                "request": {
                    "method": m,
                    "url": format!("https://shop.example.com{p}"),
                    "httpVersion": "HTTP/1.1",
                    "headers": [{"name": "accept", "value": "*/*"}],
                },
                "response": {"status": 200},
                "timings": {"wait": 1.0},
            })
        })
        .collect();
    let doc = serde_json::json!({"log": {"version": "1.2", "entries": entries}});
    let p = dir.join("mix.har");
    std::fs::write(&p, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    p
}

/// An access log (combined format) of 100 lines in a mix's shares,
/// interleaved every ten lines: `(method, request target, share)`, the
/// shares in tenths.
pub fn access_log(dir: &std::path::Path, mix: &[(&str, &str, f64)]) -> std::path::PathBuf {
    let tenths = tenths(mix);
    let lines: Vec<String> = (0..100)
        .map(|i| {
            let (m, p, _) = mix[tenths[i % 10]];
            format!(
                "127.0.0.1 - - [28/Nov/2026:20:{:02}:{:02} +0000] \"{m} {p} HTTP/1.1\" 200 2 \"-\" \"t\"",
                i / 60,
                i % 60
            )
        })
        .collect();
    let p = dir.join("access.log");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}
