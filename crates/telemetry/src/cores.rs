//! The time chosen CPUs spent busy, from `/proc/stat`: what a capacity
//! step reads of the cores the target is pinned to. A process's own
//! `utime + stime` leave out the kernel's interrupt and softirq work done
//! on its core for it (a loopback packet is received and acknowledged in
//! softirq on the core that sent it), so a pinned target's CPU per request
//! read from the process alone is too small; the core's counters hold it.

/// Counters of a set of CPUs, summed, seconds since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CoreTimes {
    /// user + nice + system + irq + softirq: busy, whoever for (steal,
    /// idle and iowait left out).
    pub busy_s: f64,
    /// irq + softirq: the kernel's interrupt work on those CPUs.
    pub irq_s: f64,
}

impl CoreTimes {
    /// `self - earlier`, each counter at least 0.
    pub fn since(self, earlier: CoreTimes) -> CoreTimes {
        CoreTimes {
            busy_s: (self.busy_s - earlier.busy_s).max(0.0),
            irq_s: (self.irq_s - earlier.irq_s).max(0.0),
        }
    }
}

/// The counters of `cpus` in `/proc/stat`'s text, clock ticks turned to
/// seconds at `hz`; `None` when `cpus` is empty or one of them is missing.
pub fn parse(text: &str, cpus: &[usize], hz: f64) -> Option<CoreTimes> {
    if cpus.is_empty() {
        return None;
    }
    let mut sum = CoreTimes::default();
    for cpu in cpus {
        let name = format!("cpu{cpu}");
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name.as_str()))?;
        let v: Vec<f64> = line
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse::<f64>().ok())
            .collect::<Option<Vec<f64>>>()?;
        // user nice system idle iowait irq softirq steal ...
        let at = |i: usize| v.get(i).copied();
        let irq = at(5)? + at(6)?;
        sum.busy_s += (at(0)? + at(1)? + at(2)? + irq) / hz;
        sum.irq_s += irq / hz;
    }
    Some(sum)
}

/// The counters of `cpus` now; `None` when `cpus` is empty or `/proc/stat`
/// cannot be read.
pub fn read(cpus: &[usize]) -> Option<CoreTimes> {
    if cpus.is_empty() {
        return None;
    }
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    parse(&text, cpus, if hz > 0 { hz as f64 } else { 100.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  300 20 100 900 10 5 40 7 0 0\n\
                        cpu0 100 0 50 400 5 2 30 3 0 0\n\
                        cpu1 200 20 50 500 5 3 10 4 0 0\n\
                        intr 1 2 3\n";

    #[test]
    fn sums_the_chosen_cpus_busy_and_kernel_time() {
        let t = parse(STAT, &[0], 100.0).unwrap();
        // user 100 + nice 0 + system 50 + irq 2 + softirq 30 = 182 ticks.
        assert!((t.busy_s - 1.82).abs() < 1e-9, "{t:?}");
        assert!((t.irq_s - 0.32).abs() < 1e-9, "{t:?}");
        let both = parse(STAT, &[0, 1], 100.0).unwrap();
        assert!((both.busy_s - (1.82 + 2.83)).abs() < 1e-9, "{both:?}");
        // The aggregate "cpu" line is not cpu0 of a one-CPU list.
        assert!(parse(STAT, &[2], 100.0).is_none());
        assert!(parse(STAT, &[], 100.0).is_none());
        let later = CoreTimes {
            busy_s: 2.0,
            irq_s: 0.3,
        };
        assert_eq!(later.since(t).irq_s, 0.0);
    }

    #[test]
    fn this_machine_cpu0_reads_and_grows() {
        let a = read(&[0]).expect("/proc/stat has cpu0");
        let b = read(&[0]).unwrap();
        assert!(b.busy_s >= a.busy_s && a.busy_s > 0.0, "{a:?} {b:?}");
        assert!(read(&[]).is_none());
    }
}
