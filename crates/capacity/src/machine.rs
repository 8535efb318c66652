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
//! [`Others`] reads what other processes took of those cores each second
//! (the cores' counters less the target's process tree), which no timed
//! loop sees.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use iolab_model::capacity::{Machine, Neighbours, Second, TargetPauses};
use iolab_model::whatif::CpuSpeed;
use iolab_telemetry::tasks::tasks;
use iolab_telemetry::{cores, pauses, procs};

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

/// Each second, the target's and the others' shares of the target's pinned
/// cores and the time the target waited for them, until [`Others::finish`].
pub struct Others {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<Second>>>,
}

/// One read of the cores and the target.
#[derive(Debug, Clone)]
struct Read {
    at: Instant,
    /// The cores' busy seconds less their interrupts'.
    cores_s: f64,
    /// The target's process tree's CPU seconds.
    target_s: f64,
    /// Each of its threads' time waiting, runnable, for a CPU (schedstat), ns.
    waited_ns: HashMap<u32, u64>,
}

impl Read {
    fn now(cpus: &[usize], pid: u32) -> Option<Read> {
        let c = cores::read(cpus)?;
        let mut pids = vec![pid];
        pids.extend(procs::descendants(pid));
        let waited_ns = tasks(&pids)
            .into_iter()
            .filter_map(|t| Some((t.tid, t.run_delay_ns?)))
            .collect();
        Some(Read {
            at: Instant::now(),
            cores_s: c.busy_s - c.irq_s,
            target_s: procs::tree_cpu_seconds(pid)?,
            waited_ns,
        })
    }

    /// The second between `self` and a later read: the target's and the
    /// others' shares of `n` cores' time, and the most one thread waited,
    /// a share of the second; `None` over no time. A process's own time
    /// leaves out the interrupt work done for it, so interrupts are left
    /// out of both.
    fn to(&self, later: &Read, n: usize) -> Option<Second> {
        let wall = later.at.duration_since(self.at).as_secs_f64();
        let span = wall * n as f64;
        if span <= 0.0 {
            return None;
        }
        // The counters tick in 10 ms lumps, read a moment apart: a busy
        // second can read 101%, so no share passes what is left of it.
        let target = ((later.target_s - self.target_s) / span).clamp(0.0, 1.0);
        let cores = (later.cores_s - self.cores_s) / span;
        let waited = later
            .waited_ns
            .iter()
            .filter_map(|(tid, ns)| Some(ns.saturating_sub(*self.waited_ns.get(tid)?)))
            .max()
            .map_or(0.0, |ns| (ns as f64 / 1e9 / wall).min(1.0));
        Some(Second {
            target,
            others: (cores - target).clamp(0.0, 1.0 - target),
            waited,
        })
    }
}

impl Others {
    /// How often the cores and the target are read.
    const EVERY: Duration = Duration::from_secs(1);

    /// Start reading `cpus` and `pid`'s process tree (the thread runs
    /// where the caller may: off those cores).
    pub fn start(cpus: &[usize], pid: u32) -> Others {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let cpus = cpus.to_vec();
        let thread = std::thread::Builder::new()
            .name("iolab-neighbours".into())
            .spawn(move || {
                let mut seconds = Vec::new();
                let Some(mut last) = Read::now(&cpus, pid) else {
                    return seconds;
                };
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(Self::EVERY);
                    let Some(now) = Read::now(&cpus, pid) else {
                        break;
                    };
                    seconds.extend(last.to(&now, cpus.len()));
                    last = now;
                }
                seconds
            })
            .ok();
        Others { stop, thread }
    }

    /// Stop reading: what was read, `None` with no whole second.
    pub fn finish(self) -> Option<Neighbours> {
        self.stop.store(true, Ordering::Relaxed);
        Neighbours::of(&self.thread?.join().ok()?)
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

    /// Shares are of the cores' time between the reads: the others' is the
    /// cores' busy time less the target's.
    #[test]
    fn others_on_the_targets_core_are_its_busy_time_less_the_targets() {
        let at = Instant::now();
        let read = |secs: u64, cores_s: f64, target_s: f64, waits: &[(u32, u64)]| Read {
            at: at + Duration::from_secs(secs),
            cores_s,
            target_s,
            waited_ns: waits.iter().copied().collect(),
        };
        let first = read(0, 10.0, 4.0, &[(1, 0), (2, 5_000_000_000)]);
        let later = read(
            2,
            13.8,
            5.0,
            &[(1, 600_000_000), (2, 5_100_000_000), (3, 9)],
        );
        let s = first.to(&later, 2).unwrap();
        assert!((s.target - 0.25).abs() < 1e-9, "{s:?}");
        assert!((s.others - 0.7).abs() < 1e-9, "{s:?}");
        // The worst thread: 0.6 s of 2; a thread new since is not read.
        assert!((s.waited - 0.3).abs() < 1e-9, "{s:?}");
        assert_eq!(read(0, 1.0, 1.0, &[]).to(&read(0, 2.0, 1.0, &[]), 1), None);
        // A second read at 101% busy is a full one.
        let full = read(0, 0.0, 0.0, &[])
            .to(&read(1, 1.01, 0.3, &[]), 1)
            .unwrap();
        assert!((full.others - 0.7).abs() < 1e-9, "{full:?}");
        // Live: this process read as the target of its first core.
        let cpu = iolab_lab::environment::allowed_cpus()[0];
        let others = Others::start(&[cpu], std::process::id());
        std::thread::sleep(Duration::from_millis(2300));
        let n = others.finish().expect("two seconds read");
        assert!(n.readings >= 2, "{n:?}");
        assert!(
            (0.0..=100.0).contains(&n.mean_pct) && n.mean_pct <= n.peak_pct,
            "{n:?}"
        );
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
