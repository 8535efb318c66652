//! A target's processes from `/proc`: the PID iolab started and every
//! process below it (a Node cluster's workers, gunicorn's workers, a launcher
//! script's server), summed: threads, resident memory, CPU seconds, open
//! files; or only CPU seconds ([`tree_cpu_seconds`], for a capacity step).
//! A worker that exits and is replaced meanwhile takes its CPU out of the
//! sum (its parent's `cutime` holds it only once reaped): a tree's CPU can
//! read low, never high.

use std::collections::HashMap;

/// The sums over a process tree.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tree {
    /// Processes in the tree.
    pub processes: u64,
    /// OS threads.
    pub threads: u64,
    /// Resident memory, MiB.
    pub rss_mb: f64,
    /// CPU seconds used so far (user + system).
    pub cpu_s: f64,
    /// Open file descriptors.
    pub fds: u64,
}

/// `pid` and its descendants; `None` once `pid` is gone (or a zombie).
pub fn tree(pid: u32) -> Option<Tree> {
    let mut total = one(pid)?;
    total.processes = 1;
    for child in descendants(pid) {
        if let Some(t) = one(child) {
            total.processes += 1;
            total.threads += t.threads;
            total.rss_mb += t.rss_mb;
            total.cpu_s += t.cpu_s;
            total.fds += t.fds;
        }
    }
    Some(total)
}

/// One process's figures.
fn one(pid: u32) -> Option<Tree> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
    };
    // A zombie has no memory and no threads to speak of: treat it as gone.
    if status
        .lines()
        .any(|l| l.starts_with("State:") && l.contains('Z'))
    {
        return None;
    }
    Some(Tree {
        processes: 1,
        threads: field("Threads:").unwrap_or(0),
        rss_mb: field("VmRSS:").unwrap_or(0) as f64 / 1024.0,
        cpu_s: cpu_seconds(pid).unwrap_or(0.0),
        fds: std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count() as u64),
    })
}

/// Every process below `pid`, from each process's parent in `/proc/*/stat`.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(p) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(parent) = parent_of(p) {
            children.entry(parent).or_default().push(p);
        }
    }
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).map_or(&[][..], Vec::as_slice) {
            out.push(c);
            todo.push(c);
        }
    }
    out
}

/// utime + stime of `pid` and of every process below it, seconds (zombies
/// included, unlike [`tree`]); `None` when `pid` is gone.
pub fn tree_cpu_seconds(pid: u32) -> Option<f64> {
    let own = cpu_seconds(pid)?;
    Some(
        descendants(pid)
            .into_iter()
            .fold(own, |sum, c| sum + cpu_seconds(c).unwrap_or(0.0)),
    )
}

/// The fields of `/proc/PID/stat` after the command name (which is in
/// parentheses and may hold spaces): field 3 (state) first.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

fn parent_of(pid: u32) -> Option<u32> {
    stat_fields(pid)?.get(1)?.parse().ok()
}

/// CPU seconds a process used (user + system): its CPU-time clock, to the
/// nanosecond and with its exited threads, else `utime + stime` from
/// `/proc/PID/stat` (the same time, in whole ticks of 10 ms: at 206 req/s
/// over a 5 s step a tick is 0.01 ms a request, a fifth of a 0.05 ms
/// handler, and a calibration's readings of one moved by that).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    clock_seconds(pid).or_else(|| stat_seconds(pid))
}

/// A process's CPU-time clock (`clock_getcpuclockid`), seconds.
fn clock_seconds(pid: u32) -> Option<f64> {
    let pid = libc::pid_t::try_from(pid).ok()?;
    let mut id: libc::clockid_t = 0;
    // SAFETY: both are out-pointers to locals that live across the calls.
    let ts = unsafe {
        if libc::clock_getcpuclockid(pid, &mut id) != 0 {
            return None;
        }
        let mut ts: libc::timespec = std::mem::zeroed();
        if libc::clock_gettime(id, &mut ts) != 0 {
            return None;
        }
        ts
    };
    Some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// utime + stime of a process, seconds.
fn stat_seconds(pid: u32) -> Option<f64> {
    let f = stat_fields(pid)?;
    // utime is field 14, stime 15.
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as f64 } else { 100.0 };
    Some((utime + stime) / hz)
}

#[cfg(test)]
mod tests {
    use std::process::{Child, Command};
    use std::time::Duration;

    use super::*;

    /// `sh -c script`, given `settle_ms` to start what it starts.
    fn shell(script: &str, settle_ms: u64) -> Child {
        let sh = Command::new("sh").args(["-c", script]).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(settle_ms));
        sh
    }

    /// Kill and reap.
    fn stop(mut sh: Child) {
        sh.kill().unwrap();
        sh.wait().unwrap();
    }

    #[test]
    fn a_tree_sums_its_children() {
        let sh = shell("sleep 5 & sleep 5 & wait", 200);
        let t = tree(sh.id()).unwrap();
        stop(sh);
        assert_eq!(t.processes, 3, "{t:?}");
        assert!(t.threads >= 3 && t.rss_mb > 0.0, "{t:?}");
        assert!(cpu_seconds(std::process::id()).is_some());
    }

    #[test]
    fn r31_09_a_process_cpu_is_read_finer_than_a_tick() {
        // A shell spinning for 0.3 s: its clock and its ticks agree within
        // a few ticks, and the clock is not a whole number of them.
        let sh = shell("while :; do :; done", 300);
        let pid = sh.id();
        let (clock, ticks) = (clock_seconds(pid), stat_seconds(pid));
        stop(sh);
        let (clock, ticks) = (clock.unwrap(), ticks.unwrap());
        assert!((clock - ticks).abs() < 0.05, "clock {clock} ticks {ticks}");
        assert!(clock > 0.1, "{clock}");
        assert!(
            ((clock * 100.0) - (clock * 100.0).round()).abs() > 1e-9,
            "{clock}"
        );
        // A process that is gone (reaped) has neither.
        assert_eq!((clock_seconds(pid), cpu_seconds(pid)), (None, None));
    }

    #[test]
    fn a_trees_cpu_counts_its_children() {
        // A shell whose child burns CPU: the tree's CPU grows, the shell's does not.
        let sh = shell("timeout 0.5 sh -c 'while :; do :; done'; sleep 5", 450);
        let pid = sh.id();
        let tree = tree_cpu_seconds(pid).unwrap();
        let own = cpu_seconds(pid).unwrap();
        stop(sh);
        assert!(tree > own + 0.05, "tree {tree} own {own}");
        assert!(tree_cpu_seconds(pid).is_none());
    }
}
