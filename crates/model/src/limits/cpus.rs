//! CPU lists (`--cpus`, `[target] cpus`), bounded before they are expanded.

/// CPUs a CPU set holds: glibc's `CPU_SETSIZE` on Linux, the bound
/// `sched_setaffinity` takes (`iolab-servers` checks it against libc's).
pub const CPU_SETSIZE: usize = 1024;

/// A CPU list that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad CPU list '{text}': {why} (use e.g. 0, 0-1 or 0,2-3)")]
pub struct CpuListError {
    /// As given.
    pub text: String,
    /// What is wrong with it.
    pub why: CpuListFault,
}

/// What is wrong with a CPU list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListFault {
    /// A part that is not a number.
    #[error("not a CPU number")]
    NotNumber,
    /// A range going down.
    #[error("a range must go up")]
    Down,
    /// A CPU past the set.
    #[error("CPU {0} is past the last a CPU set holds ({last})", last = CPU_SETSIZE - 1)]
    Past(usize),
}

/// Parse a CPU list (`1`, `0-1`, `0,2-3`), every CPU below [`CPU_SETSIZE`]
/// checked *before* a range is expanded: `0-18446744073709551615` is one
/// line of error, not an allocation.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, CpuListError> {
    let limit = CPU_SETSIZE;
    let bad = |why| CpuListError {
        text: text.to_string(),
        why,
    };
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let a: usize = a.trim().parse().map_err(|_| bad(CpuListFault::NotNumber))?;
        let b: usize = b.trim().parse().map_err(|_| bad(CpuListFault::NotNumber))?;
        if a > b {
            return Err(bad(CpuListFault::Down));
        }
        if b >= limit {
            return Err(bad(CpuListFault::Past(b)));
        }
        cpus.extend(a..=b);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}
