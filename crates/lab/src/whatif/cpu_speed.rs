//! How steady the machine's CPU is through a pair ([`CpuSpeed`]): a thread
//! times a fixed amount of work (the cpu step's Leibniz terms) by its own
//! CPU clock every [`EVERY`], from the pair's start to its end. Started
//! from the search's thread, it runs where that thread may (the
//! generator's cores, kept off the target's: `environment::keep_to`), and
//! a CPU clock is not moved by the generator's time slices there, only by
//! the CPU's speed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use iolab_model::whatif::CpuSpeed;

/// How often the work is timed: about 1% of a core in a release build.
const EVERY: Duration = Duration::from_millis(250);

/// The work timed: about a millisecond in a release build.
const TERMS: u64 = 400_000;

/// The timing thread, until [`Sampler::finish`].
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<f64>>>,
}

impl Sampler {
    /// Start timing (nothing is read if the thread cannot be started).
    pub fn start() -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("iolab-cpu-speed".into())
            .spawn(move || {
                let mut timings = Vec::new();
                while !flag.load(Ordering::Relaxed) {
                    let (Some(t0), _, Some(t1)) = (
                        thread_cpu_ms(),
                        iolab_model::cpu::leibniz(TERMS),
                        thread_cpu_ms(),
                    ) else {
                        break;
                    };
                    timings.push(t1 - t0);
                    std::thread::sleep(EVERY);
                }
                timings
            })
            .ok();
        Sampler { stop, thread }
    }

    /// Stop timing: what was read, `None` with too few timings.
    pub fn finish(self) -> Option<CpuSpeed> {
        self.stop.store(true, Ordering::Relaxed);
        let timings = self.thread?.join().ok()?;
        CpuSpeed::of(&timings)
    }
}

/// The calling thread's CPU time, ms; `None` if the clock cannot be read.
/// Not the generator's `thread_cpu_s` (getrusage): over a few milliseconds
/// its user and system split is held monotonic and read in lumps, and the
/// same pairs read 135-161% spread by it against 57-64% by this clock.
fn thread_cpu_ms() -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which lives on this stack.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sampler run for a while reads the work's time, each a positive
    /// number of milliseconds; stopped at once, too few to read.
    #[test]
    fn a_sampler_reads_the_cpu_speed_through_a_pair() {
        assert_eq!(Sampler::start().finish(), None);
        let sampler = Sampler::start();
        std::thread::sleep(EVERY * 14);
        let speed = sampler.finish().expect("at least ten timings in 3.5 s");
        assert!(speed.timings >= 10, "{speed:?}");
        assert!(speed.p10_ms > 0.0 && speed.p10_ms <= speed.p50_ms && speed.p50_ms <= speed.p90_ms);
    }
}
