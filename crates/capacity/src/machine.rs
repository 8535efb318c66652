//! The machine's noise through a search or a whatif pair: how steady the
//! CPU is ([`CpuSpeed`]: a thread times a fixed amount of work, the cpu
//! step's Leibniz terms, by its own CPU clock every [`EVERY`], from the
//! start to the end; a CPU clock is not moved by other threads' time
//! slices, only by the CPU's speed) and the CPU steal `/proc/stat` counts
//! ([`Steal`]). A sampler started from the search's thread runs where that
//! thread may (the generator's cores, kept off the target's:
//! `environment::keep_to`); [`Sampler::start_on`] puts one on the
//! target's pinned cores, where it costs the target about 1% of a core.
//! The target's own pauses (its GC) are read from its series at the start
//! and the end, when `--metrics` names them.
//! [`Others`](super::neighbours::Others) reads what other processes took of those cores each second
//! (the cores' counters less the target's process tree), which no timed
//! loop sees.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::neighbours::Others;

use iolab_model::capacity::{Machine, TargetPauses};
use iolab_model::whatif::CpuSpeed;
use iolab_telemetry::pauses;

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
        Sampler::start_on(&[])
    }

    /// Start timing on `cpus` (where the calling thread may, when empty).
    pub fn start_on(cpus: &[usize]) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let cpus = cpus.to_vec();
        let thread = std::thread::Builder::new()
            .name("iolab-cpu-speed".into())
            .spawn(move || {
                let _kept = iolab_lab::environment::keep_to(&cpus);
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

/// What a search watches the machine with: the CPU's speed on the
/// generator's cores and, when the target is pinned, on its cores; the
/// steal.
pub struct Watch {
    generator: Sampler,
    target: Option<Sampler>,
    others: Option<Others>,
    steal: Option<Steal>,
    pauses: Option<Pauses>,
}

impl Watch {
    /// Start watching; `target_cpus` are the target's pinned cores (none:
    /// not pinned, not timed there), `pid` its process (others on its
    /// cores are read only with both), `metrics` its Prometheus URL (its
    /// own pauses are read there).
    pub fn start(target_cpus: &[usize], pid: Option<u32>, metrics: Option<&str>) -> Watch {
        let pinned = !target_cpus.is_empty();
        Watch {
            generator: Sampler::start(),
            target: pinned.then(|| Sampler::start_on(target_cpus)),
            others: pid
                .filter(|_| pinned)
                .map(|p| Others::start(target_cpus, p)),
            steal: Steal::read(),
            pauses: metrics.and_then(Pauses::start),
        }
    }

    /// What the machine did since [`Watch::start`]; `None` when nothing
    /// could be read.
    pub fn finish(self) -> Option<Machine> {
        let m = Machine {
            generator_cpu: self.generator.finish(),
            target_cpu: self.target.and_then(Sampler::finish),
            steal_pct: self.steal.and_then(|s| s.since()),
            neighbours: self.others.and_then(Others::finish),
            pauses: self.pauses.and_then(Pauses::finish),
            loop_delay: None,
            asked_pct: 0.0,
        };
        (m.generator_cpu.is_some()
            || m.target_cpu.is_some()
            || m.steal_pct.is_some()
            || m.neighbours.is_some()
            || m.pauses.is_some())
        .then_some(m)
    }
}

/// The target's pause counters at the start of a search, and where to read
/// them again.
struct Pauses {
    url: String,
    first: pauses::Counters,
    at: Instant,
}

impl Pauses {
    /// How long a read of the target's series may take.
    const TIMEOUT: Duration = Duration::from_secs(1);

    fn read(url: &str) -> Option<pauses::Counters> {
        let r = iolab_lab::http::get(url, Self::TIMEOUT).ok()?;
        (r.status == 200).then(|| pauses::read(&r.body)).flatten()
    }

    /// `None` when the series cannot be read or holds no pause counter.
    fn start(url: &str) -> Option<Pauses> {
        Some(Pauses {
            first: Self::read(url)?,
            url: url.to_string(),
            at: Instant::now(),
        })
    }

    fn finish(self) -> Option<TargetPauses> {
        let last = Self::read(&self.url)?;
        let (count, total_s) = pauses::between(&self.first, &last)?;
        Some(TargetPauses {
            what: last.kind.what.to_string(),
            series: last.kind.count.to_string(),
            count,
            total_s,
            over_s: self.at.elapsed().as_secs_f64(),
            longest_s: last.longest_s,
        })
    }
}

/// The machine's CPU time counters, read from `/proc/stat`'s `cpu` line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Steal {
    /// The steal column, ticks.
    stolen: u64,
    /// Every column, ticks.
    total: u64,
}

impl Steal {
    /// Now; `None` where `/proc/stat` has no steal column.
    pub fn read() -> Option<Steal> {
        Steal::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// The `cpu` line of `/proc/stat`'s text: user nice system idle iowait
    /// irq softirq steal ... (steal is the eighth).
    fn parse(stat: &str) -> Option<Steal> {
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let ticks: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map_while(|t| t.parse().ok())
            .collect();
        // guest and guest_nice (9th, 10th) are already in user and nice.
        let total = ticks.iter().take(8).sum();
        Some(Steal {
            stolen: *ticks.get(7)?,
            total,
        })
    }

    /// Steal since `self`, % of the CPU time that passed; `None` when
    /// none passed or it cannot be read.
    fn since(self) -> Option<f64> {
        Steal::read()?.over(self)
    }

    fn over(self, before: Steal) -> Option<f64> {
        let total = self.total.checked_sub(before.total).filter(|t| *t > 0)?;
        let stolen = self.stolen.saturating_sub(before.stolen);
        Some(stolen as f64 * 100.0 / total as f64)
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

    /// A sampler on a core of its own reads there too.
    #[test]
    fn a_sampler_on_the_targets_cores_reads_there() {
        let sampler = Sampler::start_on(&[0]);
        std::thread::sleep(EVERY * 14);
        assert!(sampler.finish().is_some_and(|s| s.timings >= 10));
    }

    /// Steal is the eighth column of the `cpu` line, over all eight.
    #[test]
    fn steal_is_read_from_proc_stat_as_a_share_of_the_time_that_passed() {
        let before = Steal::parse("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3\n").unwrap();
        let after = Steal::parse("cpu  150 0 70 1000 10 0 0 60 7 0\n").unwrap();
        assert_eq!(
            before,
            Steal {
                stolen: 40,
                total: 1000
            }
        );
        let pct = after.over(before).unwrap();
        assert!((pct - 20.0 * 100.0 / 290.0).abs() < 1e-9, "{pct}");
        assert_eq!(before.over(before), None, "no time passed");
        assert_eq!(Steal::parse("cpu  1 2 3 4\n"), None, "no steal column");
        assert!(Steal::read().is_some(), "this machine's /proc/stat");
    }
}
