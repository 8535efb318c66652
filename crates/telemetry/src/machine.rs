//! What this machine will start: threads and processes, read from the
//! kernel (`kernel.threads-max`, `kernel.pid_max`, `ulimit -u`), and the
//! knobs and batch fields that ask for them, checked against it before a
//! run starts (`iolab run`, `--dry-run`, `iolab serve`).
//!
//! Here, not in `iolab-model`: the model's bounds are pure and the same on
//! every machine; these ask the kernel.

use iolab_model::batch::BatchSpec;
use iolab_model::limits::thousands;
use iolab_model::ModelParams;

/// Most threads (and processes) this machine will start for one user:
/// `kernel.threads-max`, `kernel.pid_max` and `RLIMIT_NPROC`, the lowest.
pub fn max_tasks() -> Option<u64> {
    let read = |p: &str| {
        iolab_model::files::read_capped(std::path::Path::new(p), 64)
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

/// More threads or processes than this machine starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} threads are more than this machine starts ({} at most: kernel.threads-max, kernel.pid_max, ulimit -u)", thousands(*asked), thousands(*max))]
pub struct TasksError {
    /// Threads or processes asked for.
    pub asked: u64,
    /// What this machine starts.
    pub max: u64,
}

/// A knob asking for `n` threads or processes: refused when past what this
/// machine starts (see [`max_tasks`]).
pub fn check_tasks(n: u64) -> Result<(), TasksError> {
    match max_tasks() {
        Some(max) if n > max => Err(TasksError { asked: n, max }),
        _ => Ok(()),
    }
}

/// Every knob of `params` that sizes threads or processes, against what
/// this machine starts; the error names the knob.
pub fn check_task_knobs(params: &ModelParams) -> Result<(), (&'static str, TasksError)> {
    for (k, v) in params.set_knobs() {
        if k.sizes_tasks() {
            check_tasks(u64::from(v)).map_err(|e| (k.name, e))?;
        }
    }
    Ok(())
}

/// A batch's shared pool (`shared_pool`) against what this machine starts;
/// the error names the field.
pub fn check_batch_tasks(spec: &BatchSpec) -> Result<(), (&'static str, TasksError)> {
    match spec.master.as_ref().and_then(|m| m.shared_pool) {
        Some(d) => check_tasks(u64::from(d)).map_err(|e| ("shared_pool", e)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_starts_a_bounded_number_of_tasks() {
        assert!(max_tasks().is_some_and(|n| n > 100));
        assert!(check_tasks(u64::MAX).is_err());
        assert!(check_tasks(1).is_ok());
    }
}
