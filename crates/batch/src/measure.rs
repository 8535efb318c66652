//! What a batch measures: per-task start and end times (relative to the batch
//! start), and process-wide peaks sampled from `/proc/self/status` (threads,
//! RSS) plus CPU time from `getrusage`.
//!
//! Per-task times are written lock-free into one slot pair per task, so a
//! million-task batch pays two atomic stores per task and nothing else.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use iolab_model::batch::TaskTypeStats;

use crate::tasks::{TaskList, TYPES};

/// An end slot holding this value marks a task that failed (e.g. no thread).
const FAILED: u64 = u64::MAX;

/// Start and end of every task, in nanoseconds since the batch start (+1, so
/// that 0 means "not yet").
#[derive(Debug)]
pub struct Timings {
    start: Instant,
    slots: Box<[AtomicU64]>,
    /// A clock read every millisecond by a [`Ticker`] thread, for executors
    /// that must not read the clock per task (a clock read can cost ~300 ns
    /// in a sandbox: more than a tokio task).
    coarse: AtomicU64,
}

impl Timings {
    /// Slots for `n` tasks; the batch clock starts now.
    pub fn new(n: usize) -> Arc<Self> {
        Arc::new(Timings {
            start: Instant::now(),
            slots: (0..2 * n).map(|_| AtomicU64::new(0)).collect(),
            coarse: AtomicU64::new(0),
        })
    }

    /// Nanoseconds since the batch start, read now.
    pub fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Nanoseconds since the batch start as of the last tick (at most about
    /// 1 ms old while a [`Ticker`] runs).
    pub fn coarse_ns(&self) -> u64 {
        self.coarse.load(Ordering::Relaxed)
    }

    /// Start a thread that refreshes [`Timings::coarse_ns`] every millisecond
    /// until the returned guard is dropped.
    pub fn ticker(self: &Arc<Self>) -> Ticker {
        self.coarse.store(self.now_ns(), Ordering::Relaxed);
        let (t, stop) = (self.clone(), Arc::new(AtomicBool::new(false)));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("iolab-ticker".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    t.coarse.fetch_max(t.now_ns(), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
            .ok();
        Ticker { stop, handle }
    }

    /// Task `i` started at `ns` since the batch start.
    pub fn begin_at(&self, i: usize, ns: u64) {
        self.slots[2 * i].store(ns + 1, Ordering::Relaxed);
    }

    /// Task `i` ended at `ns` since the batch start.
    pub fn end_at(&self, i: usize, ns: u64) {
        self.slots[2 * i + 1].store(ns + 1, Ordering::Relaxed);
    }

    /// The batch start.
    pub fn start(&self) -> Instant {
        self.start
    }

    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64 + 1
    }

    /// Task `i` starts being served (a thread or timer took it).
    pub fn begin(&self, i: usize) {
        self.slots[2 * i].store(self.now(), Ordering::Relaxed);
    }

    /// Task `i` is done.
    pub fn end(&self, i: usize) {
        self.slots[2 * i + 1].store(self.now(), Ordering::Relaxed);
    }

    /// Task `i` could not be run.
    pub fn fail(&self, i: usize) {
        self.slots[2 * i + 1].store(FAILED, Ordering::Relaxed);
    }

    /// `(start_ns, end_ns)` of task `i` if it completed.
    fn span(&self, i: usize) -> Option<(u64, u64)> {
        let s = self.slots[2 * i].load(Ordering::Relaxed);
        let e = self.slots[2 * i + 1].load(Ordering::Relaxed);
        (s != 0 && e != 0 && e != FAILED).then(|| (s - 1, e - 1))
    }

    /// Tasks marked failed.
    pub fn failed(&self) -> u64 {
        self.slots
            .iter()
            .skip(1)
            .step_by(2)
            .filter(|e| e.load(Ordering::Relaxed) == FAILED)
            .count() as u64
    }
}

/// Keeps [`Timings::coarse_ns`] fresh while alive.
pub struct Ticker {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Per-type statistics (`cpu`, `io`) of the completed tasks, plus the peak
/// number of tasks of each type in service at once (`peak_<type>_in_service`).
pub fn task_stats(
    tasks: &TaskList,
    t: &Timings,
) -> (BTreeMap<String, TaskTypeStats>, BTreeMap<String, f64>) {
    let present = tasks.types_present();
    let mut by_type = BTreeMap::new();
    let mut counters = BTreeMap::new();
    for (ty, name) in TYPES.iter().enumerate() {
        if !present[ty] {
            continue;
        }
        let spans: Vec<(u64, u64)> = (0..tasks.len())
            .filter(|&i| tasks.get(i).type_index() == ty)
            .filter_map(|i| t.span(i))
            .collect();
        let ms = |ns: u64| ns as f64 / 1e6;
        let mut done: Vec<f64> = spans.iter().map(|&(_, e)| ms(e)).collect();
        let mut wait: Vec<f64> = spans.iter().map(|&(s, _)| ms(s)).collect();
        let mut service: Vec<f64> = spans
            .iter()
            .map(|&(s, e)| ms(e.saturating_sub(s)))
            .collect();
        by_type.insert(
            name.to_string(),
            TaskTypeStats {
                count: spans.len() as u64,
                mean_ms: mean(&done),
                p99_ms: p99(&mut done),
                wait_mean_ms: mean(&wait),
                service_mean_ms: mean(&service),
                wait_p99_ms: p99(&mut wait),
                service_p99_ms: p99(&mut service),
            },
        );
        counters.insert(
            format!("peak_{name}_in_service"),
            peak_overlap(&spans) as f64,
        );
    }
    (by_type, counters)
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Nearest-rank 99th percentile.
fn p99(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let rank = ((v.len() as f64 * 0.99).ceil() as usize).clamp(1, v.len()) - 1;
    *v.select_nth_unstable_by(rank, f64::total_cmp).1
}

/// Most spans open at the same instant (an end at t closes before a start at t).
fn peak_overlap(spans: &[(u64, u64)]) -> u64 {
    let mut events: Vec<(u64, i8)> = spans.iter().flat_map(|&(s, e)| [(s, 1), (e, -1)]).collect();
    events.sort_unstable();
    let (mut open, mut peak) = (0i64, 0i64);
    for (_, d) in events {
        open += i64::from(d);
        peak = peak.max(open);
    }
    peak as u64
}

/// Process-wide measures over one batch.
#[derive(Debug, Clone, Default)]
pub struct ProcessPeaks {
    /// Most OS threads seen.
    pub threads: u64,
    /// OS threads before the batch.
    pub threads_before: u64,
    /// Peak RSS, MiB.
    pub rss_mb: f64,
    /// RSS before the batch, MiB.
    pub rss_before_mb: f64,
    /// CPU seconds / (wall seconds x cores).
    pub cpu_utilisation: f64,
}

/// Samples `/proc/self/status` every few milliseconds on its own thread while
/// a batch runs, and reads CPU time around it.
pub struct Meter {
    stop: Arc<AtomicBool>,
    sampler: Option<JoinHandle<(u64, u64)>>,
    before: ProcStatus,
    hwm_reset: bool,
    cpu_before: Duration,
    wall: Instant,
}

/// How often the sampler looks.
const SAMPLE_EVERY: Duration = Duration::from_millis(5);

impl Meter {
    /// Start sampling. Resets the kernel's peak-RSS mark when allowed, so
    /// `VmHWM` covers this batch only.
    pub fn start() -> Self {
        let before = ProcStatus::read();
        let hwm_reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let sampler = std::thread::Builder::new()
            .name("iolab-meter".into())
            .spawn(move || {
                let (mut threads, mut rss) = (0, 0);
                loop {
                    let s = ProcStatus::read();
                    threads = threads.max(s.threads);
                    rss = rss.max(s.rss_kb);
                    if flag.load(Ordering::Relaxed) {
                        return (threads, rss);
                    }
                    std::thread::sleep(SAMPLE_EVERY);
                }
            })
            .ok();
        Meter {
            stop,
            sampler,
            before,
            hwm_reset,
            cpu_before: cpu_time(),
            wall: Instant::now(),
        }
    }

    /// Stop sampling; `peak_threads_hint` is an executor's own count of the
    /// threads it had alive at once (exact, where sampling may miss a spike).
    pub fn finish(mut self, peak_threads_hint: Option<u64>) -> ProcessPeaks {
        let wall = self.wall.elapsed().as_secs_f64();
        let cpu = cpu_time().saturating_sub(self.cpu_before).as_secs_f64();
        self.stop.store(true, Ordering::Relaxed);
        let (threads, rss_kb) = self
            .sampler
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let after = ProcStatus::read();
        let hwm = if self.hwm_reset { after.hwm_kb } else { 0 };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        ProcessPeaks {
            threads: threads
                .max(after.threads)
                .max(peak_threads_hint.map_or(0, |h| self.before.threads + h)),
            threads_before: self.before.threads,
            rss_mb: rss_kb.max(hwm).max(after.rss_kb) as f64 / 1024.0,
            rss_before_mb: self.before.rss_kb as f64 / 1024.0,
            cpu_utilisation: if wall > 0.0 {
                cpu / (wall * cores)
            } else {
                0.0
            },
        }
    }
}

/// The lines of `/proc/self/status` a batch cares about.
#[derive(Debug, Clone, Copy, Default)]
struct ProcStatus {
    threads: u64,
    rss_kb: u64,
    hwm_kb: u64,
}

impl ProcStatus {
    fn read() -> Self {
        let mut s = ProcStatus::default();
        let Ok(text) = std::fs::read_to_string("/proc/self/status") else {
            return s;
        };
        for line in text.lines() {
            let mut it = line.split_whitespace();
            let (Some(key), Some(val)) = (it.next(), it.next()) else {
                continue;
            };
            let Ok(val) = val.parse::<u64>() else {
                continue;
            };
            match key {
                "Threads:" => s.threads = val,
                "VmRSS:" => s.rss_kb = val,
                "VmHWM:" => s.hwm_kb = val,
                _ => {}
            }
        }
        s
    }
}

/// User + system CPU time of the whole process so far.
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_and_overlap() {
        let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(p99(&mut v), 99.0);
        assert_eq!(p99(&mut [5.0]), 5.0);
        assert_eq!(peak_overlap(&[(0, 10), (5, 15), (10, 20), (30, 40)]), 2);
        assert_eq!(peak_overlap(&[]), 0);
    }

    #[test]
    fn meter_sees_this_process() {
        let meter = Meter::start();
        std::thread::sleep(Duration::from_millis(20));
        let p = meter.finish(None);
        assert!(p.threads >= 2, "{p:?}");
        assert!(p.rss_mb > 0.0, "{p:?}");
    }
}
