//! A JIT's compiler threads, found by name in `/proc/PID/task`, and the CPU
//! they used: compiling is a warm-up's cost, not a request's. A JIT
//! compiles by count, in bursts: a Spring target (Tomcat, 10 threads, 1 ms
//! of CPU and a 100 ms wait a request) held at 106/s for 2 s twelve times
//! in a row had its compiler threads use 560, 485, 229, 156, 333, 172,
//! 158, 114, 319, 79, 91 and 107 ms of the core (0.4-2.6 ms a request),
//! while its other threads' CPU fell smoothly from 1,106 to 433 ms. Read
//! with them, two holds in a row could cost alike between two bursts and a
//! calibration read A 1.5-2.0 ms a request from run to run.

use std::collections::HashMap;

use super::procs::descendants;
use super::tasks::tasks;

/// The names (`comm`, cut to 15 bytes by the kernel) of compiler threads:
/// HotSpot's C1 and C2 (every JVM runtime: Spring, Play, Scala).
pub const COMPILER_THREADS: [&str; 2] = ["C1 CompilerThre", "C2 CompilerThre"];

/// On-CPU time of every compiler thread of `pid`'s tree, ns by thread id
/// (`schedstat`'s first field); empty when it has none.
pub fn compiler_ns(pid: u32) -> HashMap<u32, u64> {
    let pids: Vec<u32> = std::iter::once(pid).chain(descendants(pid)).collect();
    tasks(&pids)
        .into_iter()
        .filter(|t| COMPILER_THREADS.contains(&t.name.as_str()))
        .filter_map(|t| Some((t.tid, t.on_cpu_ns?)))
        .collect()
}

/// Seconds the compiler threads of `now` used since `before`; `None` when
/// there are none. A thread new since then counts whole; one that exited
/// takes its time with it (HotSpot stops idle compiler threads), so this
/// can read low, never high.
pub fn since(before: &HashMap<u32, u64>, now: &HashMap<u32, u64>) -> Option<f64> {
    if now.is_empty() && before.is_empty() {
        return None;
    }
    let ns: u64 = now
        .iter()
        .map(|(tid, ns)| ns.saturating_sub(before.get(tid).copied().unwrap_or(0)))
        .sum();
    Some(ns as f64 * 1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_time_counts_threads_new_since_and_not_those_gone() {
        let before = HashMap::from([(10, 1_000_000_000), (11, 500_000_000)]);
        // 10 used 0.25 s more, 11 exited, 12 started and used 0.1 s.
        let now = HashMap::from([(10, 1_250_000_000), (12, 100_000_000)]);
        assert!((since(&before, &now).unwrap() - 0.35).abs() < 1e-12);
        assert_eq!(since(&HashMap::new(), &HashMap::new()), None);
        assert_eq!(since(&before, &HashMap::new()), Some(0.0));
    }

    #[test]
    fn a_process_without_a_jit_has_no_compiler_threads() {
        assert!(compiler_ns(std::process::id()).is_empty());
    }
}
