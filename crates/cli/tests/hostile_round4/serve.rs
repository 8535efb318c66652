//! `iolab serve`'s pool model and the live page against slow and idle clients.

use super::*;

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
