//! How steady this machine's CPU was while a test measured: a fixed amount
//! of work (the cpu step's Leibniz terms) timed every [`EVERY`] on CPU 0,
//! the generator's core (the target's, CPU 1, is left alone), for as long
//! as the test runs. Timed by the thread's own CPU clock: the generator
//! spins on that core, and a wall clock read its time slices (p10 3.9 ms,
//! p90 14.2 through the pairs), not the CPU's speed.
//!
//! Why: a prediction of B made from A's cost holds only if the CPU runs at
//! one speed through the pair. This virtual machine's did not on some days:
//! on 2026-11-28 the same `cpu:50000` took CPython 6.0-7.0 ms where it had
//! taken about 2.5, and back-to-back chunks of one fixed loop took 9-18 ms
//! over 20 s on an idle machine (p10 9.4, p90 17.2). A pair measured
//! through that is off by the machine, not by the lab; the pair check
//! widens its noise to what this reading saw (`allowance_pct`) and says so.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the work is timed: 2-4 ms of a debug build's work every
/// 250 ms, about 1% of the generator's core.
const EVERY: Duration = Duration::from_millis(250);

/// The fixed work timed.
const TERMS: u64 = 400_000;

/// The sampler, running until [`Steadiness::stop`].
pub struct Steadiness {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<f64>>,
}

/// What the sampler read: how long the fixed work took, ms, each time.
pub struct Speed {
    pub samples_ms: Vec<f64>,
}

impl Steadiness {
    /// Start timing, on CPU 0 when the machine lets the thread there.
    pub fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            pin_to_cpu0();
            let mut samples = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                let t = thread_cpu_ms();
                iolab_model::cpu::leibniz(TERMS);
                samples.push(thread_cpu_ms() - t);
                std::thread::sleep(EVERY);
            }
            samples
        });
        Steadiness { stop, thread }
    }

    /// Stop timing and give what was read.
    pub fn stop(self) -> Speed {
        self.stop.store(true, Ordering::Relaxed);
        Speed {
            samples_ms: self.thread.join().unwrap_or_default(),
        }
    }
}

impl Speed {
    /// The `q` quantile of the samples (nearest rank), `None` with fewer
    /// than ten.
    fn quantile(&self, q: f64) -> Option<f64> {
        let mut s = self.samples_ms.clone();
        if s.len() < 10 {
            return None;
        }
        s.sort_by(f64::total_cmp);
        Some(s[((s.len() - 1) as f64 * q).round() as usize])
    }

    /// How far the CPU's speed moved, %: the slow tenth's time over the
    /// fast tenth's (p90 / p10 - 1; the tails are a thread woken late, not
    /// the CPU's speed).
    pub fn spread_pct(&self) -> Option<f64> {
        Some((self.quantile(0.9)? / self.quantile(0.1)? - 1.0) * 100.0)
    }

    /// The noise a pair is allowed: its own CI noise, or what the CPU's
    /// speed moved when that is more.
    pub fn allowance_pct(&self, pair_noise: f64) -> f64 {
        self.spread_pct().map_or(pair_noise, |s| s.max(pair_noise))
    }

    /// One line for the test's output.
    pub fn line(&self) -> String {
        match (self.quantile(0.1), self.quantile(0.5), self.quantile(0.9)) {
            (Some(p10), Some(p50), Some(p90)) => format!(
                "the machine's CPU: leibniz({TERMS}) took p10 {p10:.2} ms, p50 {p50:.2}, p90 {p90:.2} over {} timings on CPU 0: its speed moved {:.0}%",
                self.samples_ms.len(),
                (p90 / p10 - 1.0) * 100.0
            ),
            _ => format!(
                "the machine's CPU: {} timings, too few to read",
                self.samples_ms.len()
            ),
        }
    }
}

/// The calling thread's CPU time, ms.
fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which lives on this stack.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1e6
}

/// Keep the calling thread on CPU 0 (the generator's), where it disturbs
/// the target least; left where it is if the machine refuses.
fn pin_to_cpu0() {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes within
    // it; sched_setaffinity reads it for the calling thread (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(0, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}
