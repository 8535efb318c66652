//! The machine a run happened on: cores, the kernel limits that decide IO
//! results (open files, ephemeral ports, TIME_WAIT reuse, threads), versions.
//! Every read is best-effort: a missing file leaves a default, never an error.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use iolab_model::environment::Environment;

/// Collect the environment; `command` is the command line that ran.
pub fn collect(command: &str) -> Environment {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    let num = |p: &str| read(p).and_then(|s| s.parse::<u64>().ok());
    let port_range = read("/proc/sys/net/ipv4/ip_local_port_range")
        .and_then(|s| {
            let mut it = s.split_whitespace().filter_map(|v| v.parse::<u32>().ok());
            Some((it.next()?, it.next()?))
        })
        .unwrap_or((0, 0));
    let mut versions = BTreeMap::new();
    versions.insert("iolab".to_string(), env!("CARGO_PKG_VERSION").to_string());
    if let Some(v) = tool_version("rustc", &["--version"]) {
        versions.insert("rustc".into(), v);
    }
    Environment {
        cores: allowed_cpus().len() as u32,
        cpu_model: cpu_model().unwrap_or_default(),
        kernel: read("/proc/sys/kernel/osrelease").unwrap_or_default(),
        nofile: iolab_loadgen::machine::nofile(),
        port_range,
        tcp_tw_reuse: num("/proc/sys/net/ipv4/tcp_tw_reuse").map(|v| v as u32),
        threads_max: num("/proc/sys/kernel/threads-max"),
        pid_max: num("/proc/sys/kernel/pid_max"),
        somaxconn: num("/proc/sys/net/core/somaxconn"),
        memory_mb: read("/proc/meminfo")
            .and_then(|m| {
                m.lines()
                    .find_map(|l| l.strip_prefix("MemTotal:"))
                    .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            })
            .map_or(0, |kb| kb / 1024),
        versions,
        git_commit: git_commit(),
        pinning: BTreeMap::new(),
        command: command.to_string(),
        services: Vec::new(),
    }
}

/// The CPUs this process may run on (sched_getaffinity), in order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect();
            if !cpus.is_empty() {
                return cpus;
            }
        }
    }
    (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
}

/// The calling thread's CPUs before [`keep_to`], restored on drop.
pub struct KeptTo {
    previous: libc::cpu_set_t,
}

/// Keep the calling thread, and every thread it starts from now on (a new
/// thread inherits its creator's CPUs), on `cpus`: the search's own threads
/// off the target's pinned core. Unpinned, a step's watch (it lists the
/// target's sockets every 100 ms) ran beside the target, pushed off the
/// generator's spinning core: it burnt 0.22 of the target's core at a
/// rust loop's 8,000/s, read as the target's and taken from it.
/// `None` (nothing changed) when `cpus` is empty or the kernel refuses.
pub fn keep_to(cpus: &[usize]) -> Option<KeptTo> {
    if cpus.is_empty() {
        return None;
    }
    // SAFETY: zeroed cpu_set_t values are valid; the calls only read and
    // write them and the calling thread's mask.
    unsafe {
        let mut previous: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        if libc::sched_getaffinity(0, size, &mut previous) != 0 {
            return None;
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(c, &mut set);
        }
        (libc::sched_setaffinity(0, size, &set) == 0).then_some(KeptTo { previous })
    }
}

impl Drop for KeptTo {
    fn drop(&mut self) {
        // SAFETY: restores the mask read in keep_to, for this thread.
        unsafe {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.previous);
        }
    }
}

/// Which CPUs the target and the generator get: with two or more, the
/// target has the first and the generator the rest; else nobody is pinned.
pub fn pinning(enabled: bool) -> (Vec<usize>, Vec<usize>) {
    let cpus = allowed_cpus();
    if !enabled || cpus.len() < 2 {
        return (Vec::new(), Vec::new());
    }
    (vec![cpus[0]], cpus[1..].to_vec())
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| {
            l.starts_with("model name") || l.starts_with("Model") || l.starts_with("Hardware")
        })
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn tool_version(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    let text = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    String::from_utf8_lossy(&text)
        .lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

/// The commit of the source tree this binary was built from, if it is a
/// git checkout still on disk (read only; nothing is changed).
fn git_commit() -> Option<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !dir.exists() {
        return None;
    }
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_this_machine() {
        let e = collect("iolab run test");
        assert!(e.cores >= 1);
        assert!(!e.kernel.is_empty());
        assert!(e.nofile.0 > 0);
        assert!(e.port_range.0 > 0 && e.port_range.1 > e.port_range.0);
        assert!(e.memory_mb > 0);
        assert_eq!(e.versions["iolab"], env!("CARGO_PKG_VERSION"));
        assert_eq!(e.command, "iolab run test");
    }

    #[test]
    fn pins_apart_only_with_two_cpus() {
        let (t, g) = pinning(true);
        if allowed_cpus().len() >= 2 {
            assert_eq!(t.len(), 1);
            assert!(!g.is_empty() && !g.contains(&t[0]));
        } else {
            assert!(t.is_empty() && g.is_empty());
        }
        assert_eq!(pinning(false), (vec![], vec![]));
    }

    #[test]
    fn a_thread_kept_to_cpus_starts_threads_there_and_is_restored() {
        let before = allowed_cpus();
        let one = vec![*before.last().unwrap()];
        {
            let _kept = keep_to(&one).expect("the kernel sets our own mask");
            assert_eq!(allowed_cpus(), one);
            let child = std::thread::spawn(allowed_cpus).join().unwrap();
            assert_eq!(child, one, "a new thread inherits the mask");
        }
        assert_eq!(allowed_cpus(), before);
        assert!(keep_to(&[]).is_none());
    }
}
