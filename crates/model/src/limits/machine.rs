//! The machine's own limits, read from the kernel: open files (and raising
//! the soft limit), threads and processes, ephemeral ports; and CPU lists,
//! bounded before they are expanded.

use crate::attack::AttackPlan;
use crate::driver::Driver;

use super::{thousands, Fault, Field, FD_RESERVE};

/// A closed loop holds one socket per client for certain: refuse a plan the
/// process cannot open that many files for, even at its hard limit (the
/// generator raises its soft limit to what it needs, see [`raise_nofile`]).
pub(super) fn check_fds(plan: &AttackPlan) -> Result<(), Fault> {
    let Driver::Closed { concurrency, .. } = plan.driver else {
        return Ok(());
    };
    let need = u64::from(concurrency) + FD_RESERVE;
    let (_, hard) = nofile();
    if hard > 0 && need > hard {
        return Err(Fault::new(
            Field::Concurrency,
            format!(
                "{} clients need {} open files, but this process may open at most {hard} (ulimit -n): raise it (ulimit -n {need}) or lower the clients",
                thousands(u64::from(concurrency)),
                thousands(need)
            ),
        ));
    }
    Ok(())
}

/// Open files this process may have: (soft, hard); (0, 0) if unknown.
pub fn nofile() -> (u64, u64) {
    // SAFETY: getrlimit fills a plain struct we own.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 {
            return (r.rlim_cur as u64, r.rlim_max as u64);
        }
    }
    (0, 0)
}

/// Raise the soft open-files limit towards `want` (never past the hard
/// limit, never lowering it), as Go's runtime does at start: a generator
/// asked for 5,000 connections should not stop at a shell's default 1,024.
/// Returns the soft limit now in force.
pub fn raise_nofile(want: u64) -> u64 {
    let (soft, hard) = nofile();
    if want <= soft || soft >= hard {
        return soft;
    }
    let new = want.min(hard);
    let r = libc::rlimit {
        rlim_cur: new as libc::rlim_t,
        rlim_max: hard as libc::rlim_t,
    };
    // SAFETY: setrlimit reads a plain struct we own.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) } == 0 {
        new
    } else {
        soft
    }
}

/// Most threads (and processes) this machine will start for one user:
/// `kernel.threads-max`, `kernel.pid_max` and `RLIMIT_NPROC`, the lowest.
pub fn max_tasks() -> Option<u64> {
    let read = |p: &str| {
        crate::files::read_capped(std::path::Path::new(p), 64)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    // SAFETY: getrlimit fills a plain struct we own.
    let nproc = unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        (libc::getrlimit(libc::RLIMIT_NPROC, &mut r) == 0 && r.rlim_cur != libc::RLIM_INFINITY)
            .then_some(r.rlim_cur as u64)
    };
    [
        read("/proc/sys/kernel/threads-max"),
        read("/proc/sys/kernel/pid_max"),
        nproc,
    ]
    .into_iter()
    .flatten()
    .min()
}

/// A knob asking for `n` threads or processes: refused when past what this
/// machine starts (see [`max_tasks`]).
pub fn check_tasks(n: u64) -> Result<(), String> {
    match max_tasks() {
        Some(max) if n > max => Err(format!(
            "{} threads are more than this machine starts ({} at most: kernel.threads-max, kernel.pid_max, ulimit -u)",
            thousands(n),
            thousands(max)
        )),
        _ => Ok(()),
    }
}

/// Every knob of `params` that sizes threads or processes, against what
/// this machine starts; the error names the knob.
pub fn check_task_knobs(params: &crate::ModelParams) -> Result<(), (&'static str, String)> {
    for (k, v) in params.set_knobs() {
        if k.sizes_tasks() {
            check_tasks(u64::from(v)).map_err(|e| (k.name, e))?;
        }
    }
    Ok(())
}

/// The ephemeral port range (`net.ipv4.ip_local_port_range`), if readable:
/// how many connections a client can open to one address and port before
/// EADDRNOTAVAIL (sockets in TIME_WAIT hold theirs for 60 s).
pub fn ephemeral_ports() -> Option<(u32, u32)> {
    let bytes = crate::files::read_capped(
        std::path::Path::new("/proc/sys/net/ipv4/ip_local_port_range"),
        64,
    )
    .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let mut it = text
        .split_whitespace()
        .filter_map(|v| v.parse::<u32>().ok());
    Some((it.next()?, it.next()?))
}

/// Parse a CPU list (`1`, `0-1`, `0,2-3`), every CPU below `CPU_SETSIZE`
/// checked *before* a range is expanded: `0-18446744073709551615` is one
/// line of error, not an allocation.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let limit = libc::CPU_SETSIZE as usize;
    let bad = |why: &str| format!("bad CPU list '{text}': {why} (use e.g. 0, 0-1 or 0,2-3)");
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let a: usize = a.trim().parse().map_err(|_| bad("not a CPU number"))?;
        let b: usize = b.trim().parse().map_err(|_| bad("not a CPU number"))?;
        if a > b {
            return Err(bad("a range must go up"));
        }
        if b >= limit {
            return Err(bad(&format!(
                "CPU {b} is past the last a CPU set holds ({})",
                limit - 1
            )));
        }
        cpus.extend(a..=b);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}
