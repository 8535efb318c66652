//! The inside of a target during one capacity step: a thread that every
//! 100 ms reads its process tree's threads by state and its sockets
//! ([`iolab_telemetry::tasks`]), and at the end the [`Signals`] the fit
//! reads at the knee: threads by state (means), the busiest thread and the
//! run-queue wait over the step, the most connections to each downstream,
//! the deepest accept queue.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use iolab_model::capacity::{Downstream, HotThread, Signals, ThreadState, Threads};

use iolab_telemetry::procs::descendants;
use iolab_telemetry::tasks::{cores_allowed, cpu_by_thread, sockets, tasks, Task};

/// Sampling period.
const PERIOD: Duration = Duration::from_millis(100);

/// A running watch; [`Watch::finish`] stops it.
pub struct Watch {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Signals>>,
}

impl Watch {
    /// Start watching `pid` and every process below it.
    pub fn start(pid: u32) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = thread::Builder::new()
            .name("iolab-watch".into())
            .spawn(move || watch(pid, &flag))
            .ok();
        Watch { stop, handle }
    }

    /// Stop and say what was seen.
    pub fn finish(mut self) -> Signals {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The sums a watch keeps between samples.
#[derive(Default)]
struct Sums {
    samples: u32,
    threads: f64,
    processes: u64,
    states: BTreeMap<ThreadState, f64>,
    accept_queue: Option<u64>,
    inbound: Option<u64>,
    outbound: BTreeMap<String, u64>,
}

fn watch(pid: u32, stop: &AtomicBool) -> Signals {
    let t0 = Instant::now();
    let tree = |pid: u32| {
        let mut p = vec![pid];
        p.extend(descendants(pid));
        p
    };
    let first: Vec<Task> = tasks(&tree(pid));
    let mut last = first.clone();
    let mut sums = Sums::default();
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let pids = tree(pid);
        let now = tasks(&pids);
        if now.is_empty() {
            break; // gone
        }
        add(&mut sums, &pids, &now);
        last = now;
        next += PERIOD;
        let wait = next.saturating_duration_since(Instant::now());
        let end = Instant::now() + wait;
        while Instant::now() < end && !stop.load(Ordering::Relaxed) {
            thread::sleep((end - Instant::now()).min(Duration::from_millis(20)));
        }
    }
    finish(pid, sums, &first, &last, t0.elapsed().as_secs_f64())
}

fn add(sums: &mut Sums, pids: &[u32], now: &[Task]) {
    sums.samples += 1;
    sums.threads += now.len() as f64;
    sums.processes = sums.processes.max(pids.len() as u64);
    for t in now {
        *sums.states.entry(t.state).or_insert(0.0) += 1.0;
    }
    if let Some(s) = sockets(pids) {
        sums.accept_queue = Some(sums.accept_queue.unwrap_or(0).max(s.accept_queue));
        sums.inbound = Some(sums.inbound.unwrap_or(0).max(s.inbound));
        for (e, n) in s.outbound {
            let m = sums.outbound.entry(e).or_insert(0);
            *m = (*m).max(n);
        }
    }
}

fn finish(pid: u32, sums: Sums, first: &[Task], last: &[Task], secs: f64) -> Signals {
    if sums.samples == 0 {
        return Signals::default();
    }
    let k = f64::from(sums.samples);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as f64 } else { 100.0 };
    let secs = secs.max(1e-3);
    let hottest = cpu_by_thread(first, last, hz)
        .into_values()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(name, cpu)| HotThread {
            name,
            cores: cpu / secs,
        });
    let delay = |ts: &[Task]| -> Option<u64> { ts.iter().map(|t| t.run_delay_ns).sum() };
    let cpu_wait = delay(first)
        .zip(delay(last))
        .map(|(a, b)| b.saturating_sub(a) as f64 / 1e9 / secs);
    let mut downstream: Vec<Downstream> = sums
        .outbound
        .into_iter()
        .map(|(endpoint, connections)| Downstream {
            endpoint,
            connections,
        })
        .collect();
    downstream.sort_by_key(|d| std::cmp::Reverse(d.connections));
    Signals {
        threads: Some(Threads {
            samples: sums.samples,
            threads: sums.threads / k,
            processes: sums.processes,
            states: sums.states.into_iter().map(|(s, n)| (s, n / k)).collect(),
            hottest,
            cpu_wait,
            cores_allowed: cores_allowed(pid),
        }),
        downstream,
        accept_queue: sums.accept_queue,
        inbound: sums.inbound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watches_a_real_process_tree_sleeping_and_computing() {
        // A shell with a sleeping child and a computing one.
        let mut sh = std::process::Command::new("sh")
            .args([
                "-c",
                "sleep 6 & timeout 4 sh -c 'while :; do :; done' & wait",
            ])
            .spawn()
            .unwrap();
        // On a loaded machine the children start late: wait for them.
        let t0 = Instant::now();
        while descendants(sh.id()).len() < 3 && t0.elapsed() < Duration::from_secs(3) {
            thread::sleep(Duration::from_millis(20));
        }
        let w = Watch::start(sh.id());
        // Two seconds, not one: at a load average of 5 the sampler took 2 samples in one
        // second where it takes 10 on a quiet machine.
        thread::sleep(Duration::from_millis(2000));
        let s = w.finish();
        sh.kill().unwrap();
        sh.wait().unwrap();
        let t = s.threads.expect("threads read");
        assert!(t.samples >= 4 && t.processes >= 3, "{t:?}");
        assert!(t.in_state(ThreadState::Running) >= 0.5, "{t:?}");
        // The spinning shell (on a busy machine it may get little of a core).
        let hot = t.hottest.expect("a busiest thread");
        assert!(hot.name == "sh" && hot.cores > 0.03, "{hot:?}");
        assert!(t.cores_allowed.is_some_and(|n| n >= 1));
    }
}
