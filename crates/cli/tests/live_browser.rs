//! `--live` seen by the programs users watch it with: a real headless
//! Chromium (driven through chromedriver's WebDriver protocol) on the page
//! of a running attack, whose charts must change between two screenshots
//! with nothing fetched but the page's own server; and a real Prometheus
//! scraping a running attack, whose figures must be iolab's. Both programs
//! come from `scripts/install-deps` (the test set); a test never installs.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A process killed and reaped when dropped.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn need(program: &str) {
    assert!(
        Path::new(program).exists(),
        "{program} is missing: run scripts/install-deps (the test set installs it)"
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One HTTP/1.1 exchange on 127.0.0.1:`port`: the status and the body,
/// read by its Content-Length (chromedriver keeps the connection open
/// whatever the request says) or to the end.
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut head = String::new();
    let mut line = String::new();
    while r.read_line(&mut line).unwrap() > 0 && line != "\r\n" {
        head.push_str(&line);
        line.clear();
    }
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let length = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("content-length")
            .then(|| v.trim().parse::<usize>().ok())?
    });
    let mut bytes = Vec::new();
    match length {
        Some(n) => {
            bytes.resize(n, 0);
            r.read_exact(&mut bytes).unwrap();
        }
        None => {
            r.read_to_end(&mut bytes).unwrap();
        }
    }
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

/// Wait until GET `path` on `port` answers 200.
fn ready(port: u16, path: &str, what: &str) {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() && http(port, "GET", path, None).0 == 200
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{what} did not come up");
}

/// `iolab attack ARGS --live...` (killed when dropped) with its page's URL
/// (from stderr).
fn attack_live(args: &[&str]) -> (Reaped, String) {
    let mut child = Reaped(
        Command::new(env!("CARGO_BIN_EXE_iolab"))
            .arg("attack")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut err = BufReader::new(child.0.stderr.take().unwrap());
    let mut line = String::new();
    while err.read_line(&mut line).unwrap() > 0 {
        if let Some(rest) = line.strip_prefix("live: ") {
            let url = rest.split_whitespace().next().unwrap().to_string();
            std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
            return (child, url);
        }
        line.clear();
    }
    panic!("no live URL");
}

/// A WebDriver session of headless Chromium.
struct Browser {
    port: u16,
    session: String,
    _driver: Reaped,
}

impl Browser {
    fn start(profile: &Path) -> Browser {
        need("/usr/bin/chromium");
        need("/usr/bin/chromedriver");
        let port = free_port();
        let driver = Reaped(
            Command::new("/usr/bin/chromedriver")
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        ready(port, "/status", "chromedriver");
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--window-size=1280,1400",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain([format!("--user-data-dir={}", profile.display())])
        .collect::<Vec<_>>();
        let caps = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome",
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}}}});
        let (status, body) = http(port, "POST", "/session", Some(&caps));
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        let session = v["value"]["sessionId"].as_str().unwrap().to_string();
        Browser {
            port,
            session,
            _driver: driver,
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let path = format!("/session/{}{path}", self.session);
        let (status, text) = http(self.port, method, &path, body.as_ref());
        assert_eq!(status, 200, "{method} {path}: {text}");
        serde_json::from_str::<Value>(&text).unwrap()["value"].clone()
    }

    fn script(&self, js: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({"script": js, "args": []})),
        )
    }

    fn screenshot(&self) -> String {
        self.call("GET", "/screenshot", None)
            .as_str()
            .unwrap()
            .to_string()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let path = format!("/session/{}", self.session);
        let _ = http(self.port, "DELETE", &path, None);
    }
}

/// The page of a running attack, in Chromium: pushed updates change its
/// charts between two screenshots, and it fetched nothing but its events.
#[test]
fn chromium_sees_the_live_charts_change() {
    let target = common::serve(&["--model", "loop-async"]);
    let url = format!("{}/work?steps=sleep:20", target.url);
    // The browser first (its start is the slow part on a busy machine), then
    // an attack that outlasts the test (killed when the test ends).
    let profile = tempfile::tempdir().unwrap();
    let b = Browser::start(profile.path());
    let (_attack, page) = attack_live(&[
        "-q",
        &url,
        "--rate",
        "150",
        "-d",
        "60s",
        "--interval",
        "500ms",
        "--live",
    ]);
    b.call("POST", "/url", Some(json!({"url": page})));
    let look = "var s=document.querySelector('#series svg');return [document.getElementById('conn').textContent, s ? s.outerHTML : ''];";
    std::thread::sleep(Duration::from_millis(1500));
    let (a, va) = (b.screenshot(), b.script(look));
    std::thread::sleep(Duration::from_millis(2500));
    let (z, vz) = (b.screenshot(), b.script(look));
    assert_eq!(vz[0], "live", "the page is not connected to its events");
    let (svg_a, svg_z) = (va[1].as_str().unwrap(), vz[1].as_str().unwrap());
    assert!(
        svg_a.contains("<svg") && svg_z.contains("p50 and p99 latency"),
        "{svg_z}"
    );
    assert_ne!(svg_a, svg_z, "the chart did not change in 2.5 s");
    assert_ne!(a, z, "the screenshots are the same");
    let fetched = b.script(
        "return performance.getEntriesByType('resource').map(function(e){return e.name;});",
    );
    for f in fetched.as_array().unwrap() {
        assert!(
            f.as_str().unwrap().starts_with(&page),
            "fetched {f} from elsewhere"
        );
    }
    if let Ok(out) = std::env::var("IOLAB_LIVE_SCREENSHOT") {
        use base64::Engine;
        let png = base64::engine::general_purpose::STANDARD
            .decode(&z)
            .unwrap();
        std::fs::write(out, png).unwrap();
    }
}

/// Prometheus scrapes a running attack's `/metrics`: its last sample of
/// the answers is the attack's count, and its quantile of the buckets
/// falls in the bucket of iolab's exact p99.
#[test]
fn prometheus_scrapes_a_live_attack() {
    need("/usr/bin/prometheus");
    let target = common::serve(&["--model", "loop-async"]);
    let tmp = tempfile::tempdir().unwrap();
    let (live_port, prom_port) = (free_port(), free_port());
    let config = tmp.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!("global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\nscrape_configs:\n  - job_name: iolab\n    static_configs:\n      - targets: ['127.0.0.1:{live_port}']\n"),
    )
    .unwrap();
    let _prom = Reaped(
        Command::new("/usr/bin/prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                tmp.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    ready(prom_port, "/-/ready", "prometheus");
    // Prometheus applies discovered targets a few seconds after it starts:
    // the attack begins once ours is on its list.
    let until = Instant::now() + Duration::from_secs(30);
    let listed = format!("127.0.0.1:{live_port}");
    while !http(prom_port, "GET", "/api/v1/targets", None)
        .1
        .contains(&listed)
    {
        assert!(Instant::now() < until, "prometheus never listed the target");
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["attack", &format!("{}/work?steps=sleep:20", target.url)])
        .args(["--rate", "200", "-d", "3s", "--json", "-q"])
        .arg(format!("--live=127.0.0.1:{live_port}"))
        .output()
        .unwrap();
    let doc = common::json_ok(&out);
    let query = |q: &str| -> f64 {
        let path = format!("/api/v1/query?query={}", encode(q));
        let (status, body) = http(prom_port, "GET", &path, None);
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["data"]["result"][0]["value"][1]
            .as_str()
            .unwrap_or_else(|| panic!("{q}: {v}"))
            .parse()
            .unwrap()
    };
    // The attack is over: once Prometheus finds its target gone it marks the
    // series stale, so read their last samples over the last minute.
    let ok = query("last_over_time(iolab_requests_finished_total{outcome=\"ok\"}[1m])");
    assert_eq!(
        ok,
        doc["requests"]["ok"].as_f64().unwrap(),
        "the last scrape is the final count"
    );
    let p99 = query(
        "histogram_quantile(0.99, sum by (le) (last_over_time(iolab_request_latency_seconds_bucket[1m])))",
    );
    let exact = doc["latency_ms"]["p99"].as_f64().unwrap() / 1e3;
    let ratio = p99 / exact;
    assert!(
        (1.0 / 1.27..=1.27).contains(&ratio),
        "prometheus {p99} s vs iolab {exact} s"
    );
}

/// Percent-encode a query for a URL.
fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
