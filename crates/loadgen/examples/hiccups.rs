//! How long this machine keeps a thread off its CPU (hypervisor pauses,
//! interrupts, kernel threads), in the manner of jHiccup.
//!
//! Usage: `hiccups SECONDS [SLEEP_US]` (pin it: `taskset -c 1 hiccups 10`).
//! Without SLEEP_US it spins reading the monotonic clock for SECONDS and
//! prints `{"seconds": S, "gaps": N, "wait_share": {"0.05": p, ...}}`, where
//! `wait_share[x]` is the share of instants at which a thread that wanted to
//! run would have waited more than x ms (sum over gaps g > x of g - x, over
//! the time measured): what the host does to a never-idle vCPU, not a floor
//! under a spinning generator (the host takes such a vCPU more often). With
//! SLEEP_US it sleeps that long again and again (timer slack 1 ns, as the
//! generator's threads) and prints how late it woke, `{"sleep_us": N,
//! "late_ms": {"p50": .., "p99": .., "p999": .., "max": ..}}`: the floor
//! under a generator that sleeps between its events.

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
    if let Some(us) = std::env::args().nth(2) {
        let us: u64 = us.parse().unwrap_or_else(|_| {
            eprintln!("error: SLEEP_US must be a whole number of microseconds");
            std::process::exit(2)
        });
        sleeping(secs, Duration::from_micros(us.clamp(1, 1_000_000)));
        return;
    }
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
            format!("\"{x}\": {:.6}", (waited / measured_ms).max(0.0))
        })
        .collect();
    println!(
        "{{\"seconds\": {:.3}, \"gaps\": {}, \"wait_share\": {{{}}}}}",
        measured_ms / 1e3,
        gaps.len(),
        shares.join(", ")
    );
}

/// Sleep `nap` again and again for `secs`; print how late each wake was.
fn sleeping(secs: f64, nap: Duration) {
    // SAFETY: prctl on the calling thread with a plain integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut late = Vec::new();
    while Instant::now() < end && late.len() < MAX_GAPS {
        let t = Instant::now();
        std::thread::sleep(nap);
        late.push((t.elapsed().saturating_sub(nap)).as_secs_f64() * 1e3);
    }
    late.sort_by(f64::total_cmp);
    let at = |q: f64| late[((late.len() as f64 * q) as usize).min(late.len() - 1)];
    println!(
        "{{\"sleep_us\": {}, \"wakes\": {}, \"late_ms\": {{\"p50\": {:.3}, \"p99\": {:.3}, \"p999\": {:.3}, \"max\": {:.3}}}}}",
        nap.as_micros(),
        late.len(),
        at(0.5),
        at(0.99),
        at(0.999),
        late.last().copied().unwrap_or(0.0)
    );
}
