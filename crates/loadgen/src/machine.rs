//! The generator's side of the machine: how many files this process may open
//! (every connection is one), raising the soft limit for a run, and a plan's
//! bounds together with that limit ([`check_bounds`]).
//!
//! Here, not in `iolab-model`, because they ask the kernel: the model's
//! bounds ([`iolab_model::limits`]) are pure and the same on every machine.

use iolab_model::attack::AttackPlan;
use iolab_model::driver::Driver;
use iolab_model::limits::{check_attack, thousands, Fault, Field, FD_RESERVE};

/// Every bound of a load plan ([`check_attack`]), then the file descriptors
/// its clients need on this machine.
pub fn check_bounds(plan: &AttackPlan) -> Result<(), Fault> {
    check_attack(plan)?;
    check_fds(plan)
}

/// A closed loop holds one socket per client for certain: refuse a plan the
/// process cannot open that many files for, even at its hard limit (the
/// generator raises its soft limit to what it needs, see [`raise_nofile`]).
fn check_fds(plan: &AttackPlan) -> Result<(), Fault> {
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

/// Peak resident memory of this process so far, KiB (`VmHWM` of
/// `/proc/self/status`); `None` where that is not readable.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_open_files_limit_is_read_and_kept() {
        let (soft, hard) = nofile();
        assert!(soft > 0 && soft <= hard);
        assert_eq!(raise_nofile(soft), soft);
    }

    #[test]
    fn clients_past_the_hard_limit_are_refused() {
        let (_, hard) = nofile();
        // One client more than the hard limit leaves room for; the cli's
        // hostile test lowers the limit in a shell for machines set higher.
        let Ok(concurrency) = u32::try_from(hard + 1 - FD_RESERVE) else {
            return;
        };
        if concurrency > iolab_model::limits::MAX_CONNECTIONS {
            return;
        }
        let mut plan = AttackPlan::new(
            "http://127.0.0.1:1/",
            Driver::Closed {
                concurrency,
                requests: None,
                duration: Some(Duration::from_secs(1)),
            },
        );
        plan.threads = Some(1);
        let e = check_bounds(&plan).unwrap_err();
        assert_eq!(e.field, Field::Concurrency);
        assert!(e.message.contains("ulimit -n"), "{e}");
    }
}
