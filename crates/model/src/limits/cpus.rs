//! CPU lists (`--cpus`, `[target] cpus`), bounded before they are expanded.

/// CPUs a CPU set holds: glibc's `CPU_SETSIZE` on Linux, the bound
/// `sched_setaffinity` takes (`iolab-servers` checks it against libc's).
pub const CPU_SETSIZE: usize = 1024;

/// Parse a CPU list (`1`, `0-1`, `0,2-3`), every CPU below [`CPU_SETSIZE`]
/// checked *before* a range is expanded: `0-18446744073709551615` is one
/// line of error, not an allocation.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let limit = CPU_SETSIZE;
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
