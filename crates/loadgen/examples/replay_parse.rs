//! How fast a replay reads a large access log, and what it holds while
//! doing so: writes a combined log of N lines (default 1,000,000; ids,
//! UUIDs, static files, one line in ten a POST) to a temporary folder,
//! reads it with `iolab_loadgen::replay::load` as `iolab attack --replay`
//! does, and prints lines per second and the process's peak RSS
//! (`VmHWM`) before and after.
//!
//! ```text
//! cargo run -p iolab-loadgen --example replay_parse -- [LINES]
//! ```

use std::io::{BufWriter, Write};
use std::time::Instant;

use iolab_loadgen::replay::{self, Options};

fn main() {
    let lines: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile_dir();
    let path = dir.join("access.log");
    write_log(&path, lines);
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let rss_before = peak_rss_kib();
    let t = Instant::now();
    let loaded = replay::load(&path, &Options::default()).expect("the generated log loads");
    let secs = t.elapsed().as_secs_f64();
    let rss_after = peak_rss_kib();
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{lines} lines ({:.1} MiB) in {secs:.2} s: {:.0} lines/s, {:.1} MiB/s; {} endpoints, {} kept, {} skipped",
        bytes as f64 / 1048576.0,
        lines as f64 / secs,
        bytes as f64 / 1048576.0 / secs,
        loaded.mix.endpoints.len(),
        loaded.mix.total,
        loaded.mix.skipped.writes.values().sum::<u64>(),
    );
    println!(
        "peak RSS: {} before reading, {} after (VmHWM)",
        kib(rss_before),
        kib(rss_after)
    );
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("iolab-replay-parse-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("a temporary folder");
    d
}

fn write_log(path: &std::path::Path, lines: u64) {
    let mut w = BufWriter::new(std::fs::File::create(path).expect("create the log"));
    for i in 0..lines {
        let (method, target) = match i % 10 {
            0 => ("POST", "/api/orders".to_string()),
            1..=4 => ("GET", format!("/api/orders/{}?expand=items", i % 5000)),
            5 | 6 => (
                "GET",
                format!(
                    "/api/users/{:08x}-4f89-11d3-9a0c-0305e82c3301/cart",
                    i as u32
                ),
            ),
            7 => ("GET", "/static/app.js?v=3".to_string()),
            _ => ("GET", "/health".to_string()),
        };
        let (m, s) = ((i / 60) % 60, i % 60);
        writeln!(
            w,
            "10.0.{}.{} - - [28/Nov/2026:20:{m:02}:{s:02} +0000] \"{method} {target} HTTP/1.1\" 200 {} \"https://shop.example/\" \"Mozilla/5.0 (X11; Linux x86_64)\" 0.{:03}",
            i % 200,
            i % 250,
            100 + i % 900,
            i % 250
        )
        .expect("write the log");
    }
    w.flush().expect("write the log");
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn kib(v: Option<u64>) -> String {
    v.map_or("unknown".into(), |k| {
        format!("{:.1} MiB", k as f64 / 1024.0)
    })
}
