//! Other processes on the target's pinned cores ([`Others`]): each
//! second, the cores' busy time less the target's process tree's, and the
//! longest one of its threads waited, runnable, for a CPU (schedstat). A
//! fixed loop timed by its own CPU clock does not see them; this does.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use iolab_model::capacity::{Neighbours, Second};
use iolab_telemetry::tasks::tasks;
use iolab_telemetry::{cores, procs};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
