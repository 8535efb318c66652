//! A target's descendants, found by walking `/proc/*/stat` parent links.
//!
//! Stopping a target signals its process group, but a grandchild that called
//! `setsid` (a daemonising launcher, `setsid worker &`) left that group, and
//! `PR_SET_PDEATHSIG` ties only the direct child to us: such a process would
//! outlive the run and hold its port and CPUs. So the tree is collected
//! *before* the target is signalled (once a parent exits, its children are
//! re-parented and the chain is gone), and each process is remembered with
//! its start time, so a pid reused later is never signalled.

use std::collections::HashMap;

/// One process: its pid and its start time (clock ticks since boot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Proc {
    pid: libc::pid_t,
    start: u64,
}

/// Every process whose parent chain leads to `root` (not `root` itself).
pub(crate) fn descendants(root: libc::pid_t) -> Vec<Proc> {
    let mut children: HashMap<libc::pid_t, Vec<Proc>> = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        if let Some((ppid, start)) = stat(pid) {
            children.entry(ppid).or_default().push(Proc { pid, start });
        }
    }
    below(root, &children)
}

/// The processes under `root` in a parent -> children map, breadth first;
/// each pid once (a map built from a racing `/proc` read cannot loop us).
fn below(root: libc::pid_t, children: &HashMap<libc::pid_t, Vec<Proc>>) -> Vec<Proc> {
    let mut out: Vec<Proc> = Vec::new();
    let mut seen = std::collections::HashSet::from([root]);
    let mut next = 0;
    let mut parent = root;
    loop {
        for &p in children.get(&parent).into_iter().flatten() {
            if seen.insert(p.pid) {
                out.push(p);
            }
        }
        let Some(p) = out.get(next) else {
            return out;
        };
        parent = p.pid;
        next += 1;
    }
}

/// Send `sig` to each process still the one collected (same start time).
pub(crate) fn signal(procs: &[Proc], sig: libc::c_int) {
    for p in procs {
        if p.pid > 0 && stat(p.pid).is_some_and(|(_, start)| start == p.start) {
            // SAFETY: kill(2) on a pid we just saw as this very process.
            unsafe {
                libc::kill(p.pid, sig);
            }
        }
    }
}

/// Parent pid and start time from `/proc/PID/stat`. The command name (field
/// 2) may hold spaces and parentheses, so fields are counted after its last `)`.
fn stat(pid: libc::pid_t) -> Option<(libc::pid_t, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<(libc::pid_t, u64)> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (field 3), ppid (4), ..., starttime (22).
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_names() {
        let line = "42 (a) b (c)) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 12345 0 0";
        assert_eq!(parse_stat(line), Some((7, 12345)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn walks_the_whole_tree_once() {
        let p = |pid| Proc { pid, start: 1 };
        let map = HashMap::from([
            (1, vec![p(2), p(3)]),
            (2, vec![p(4)]),
            (4, vec![p(5), p(1)]),
            (9, vec![p(10)]),
        ]);
        let pids: Vec<_> = below(1, &map).iter().map(|p| p.pid).collect();
        assert_eq!(pids, vec![2, 3, 4, 5]);
    }

    #[test]
    fn finds_our_own_child() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let me = std::process::id() as libc::pid_t;
        let found = descendants(me)
            .iter()
            .any(|p| p.pid == child.id() as libc::pid_t);
        let _ = child.kill();
        let _ = child.wait();
        assert!(found);
    }

    /// Alive, and not a zombie waiting for a parent that does not reap.
    fn running(pid: libc::pid_t) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|t| {
                t[t.rfind(')')? + 1..]
                    .split_whitespace()
                    .next()
                    .map(str::to_owned)
            })
            .is_some_and(|state| state != "Z" && state != "X")
    }

    #[test]
    fn r30_19_a_setsid_grandchild_is_stopped_with_its_target() {
        use super::super::child::TargetCommand;
        use super::super::process::Target;
        let dir = std::env::temp_dir().join(format!("iolab-r30-19-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("grandchild.pid");
        // The target starts a grandchild in its own session, waits until it
        // has written its pid, then never becomes healthy: the failed start
        // stops the target, which must take the grandchild with it.
        let script = format!(
            "setsid sh -c 'echo $$ > {f}; exec sleep 300' & while [ ! -s {f} ]; do sleep 0.01; done; sleep 300",
            f = file.display()
        );
        let cmd = TargetCommand {
            argv: vec!["sh".into(), "-c".into(), script],
            port: Some(crate::targets::process::free_port().unwrap()),
            cpus: vec![],
            dir: None,
        };
        let no = std::sync::atomic::AtomicBool::new(false);
        let e = Target::start(&cmd, std::time::Duration::from_secs(3), &no).unwrap_err();
        assert!(e.0.contains("not healthy"), "{e}");
        let pid: libc::pid_t = std::fs::read_to_string(&file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // SIGKILL has been sent; wait (a hang guard, not a speed target) for
        // the kernel to finish it.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while running(pid) && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let alive = running(pid);
        if alive {
            // SAFETY: the grandchild this test started; do not leave it behind.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(!alive, "grandchild {pid} outlived its target");
    }
}
