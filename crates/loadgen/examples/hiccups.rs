//! How long a thread that never sleeps is kept off its CPU: the floor under
//! any latency measured on this machine (hypervisor pauses, interrupts,
//! kernel threads), in the manner of jHiccup.
//!
//! Usage: `hiccups SECONDS` (pin it: `taskset -c 1 hiccups 10`). It spins
//! reading the monotonic clock for SECONDS and prints one JSON object:
//! `{"seconds": S, "gaps": N, "wait_share": {"0.05": p, ...}}`, where
//! `wait_share[x]` is the share of instants at which a thread that wanted to
//! run would have waited more than x ms (sum over gaps g > x of g - x, over
//! the time measured). A latency measured through k such instants has a p99
//! of at least the smallest x whose k shares add up to 1%.

use std::time::{Duration, Instant};

/// Gaps shorter than this are the loop itself.
const MIN_GAP: Duration = Duration::from_micros(20);
/// Bounded memory whatever the machine does.
const MAX_GAPS: usize = 1_000_000;
const THRESHOLDS_MS: [f64; 12] = [
    0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0,
];

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .filter(|s: &f64| *s > 0.0 && *s <= 600.0)
        .unwrap_or_else(|| {
            eprintln!("error: usage: hiccups SECONDS (0 < SECONDS <= 600)");
            std::process::exit(2)
        });
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let mut gaps = Vec::new();
    let mut prev = start;
    loop {
        let now = Instant::now();
        let gap = now - prev;
        prev = now;
        if now >= end {
            break;
        }
        if gap > MIN_GAP && gaps.len() < MAX_GAPS {
            gaps.push(gap.as_secs_f64() * 1e3);
        }
    }
    let measured_ms = (prev - start).as_secs_f64() * 1e3;
    let shares: Vec<String> = THRESHOLDS_MS
        .iter()
        .map(|&x| {
            let waited: f64 = gaps.iter().filter(|&&g| g > x).map(|g| g - x).sum();
            format!("\"{x}\": {:.6}", waited / measured_ms)
        })
        .collect();
    println!(
        "{{\"seconds\": {:.3}, \"gaps\": {}, \"wait_share\": {{{}}}}}",
        measured_ms / 1e3,
        gaps.len(),
        shares.join(", ")
    );
}
