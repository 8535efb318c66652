//! CPU of a service that is more than one process (gunicorn's and nginx's
//! master with its workers): the process and every descendant alive now,
//! found through `/proc/*/stat`'s parent field; each one's CPU is read with
//! [`telemetry::proc_cpu_seconds`](crate::telemetry::proc_cpu_seconds).
//! A worker that exits and is replaced during a step loses its CPU from
//! the sum (its parent's `cutime` holds it only once reaped): the reading
//! can be low, never high.

use std::collections::HashMap;

/// utime + stime of `pid` and its descendants, seconds; `None` when `pid`
/// is gone.
pub fn tree_cpu_seconds(pid: u32) -> Option<f64> {
    let own = crate::telemetry::proc_cpu_seconds(pid)?;
    let children = children_map();
    let mut total = own;
    let mut stack = vec![pid];
    while let Some(p) = stack.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
            total += crate::telemetry::proc_cpu_seconds(c).unwrap_or(0.0);
            stack.push(c);
        }
    }
    Some(total)
}

/// Parent -> children, for every process readable now.
fn children_map() -> HashMap<u32, Vec<u32>> {
    let mut map: HashMap<u32, Vec<u32>> = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return map;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(ppid) = parent(pid) {
            map.entry(ppid).or_default().push(pid);
        }
    }
    map
}

/// Field 4 of `/proc/PID/stat` (after the parenthesised name).
fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_cpu_of_children() {
        // A shell whose child burns CPU: the tree's CPU grows, the shell's does not.
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "timeout 0.5 sh -c 'while :; do :; done'; sleep 5"])
            .spawn()
            .unwrap();
        let pid = sh.id();
        std::thread::sleep(std::time::Duration::from_millis(450));
        let tree = tree_cpu_seconds(pid).unwrap();
        let own = crate::telemetry::proc_cpu_seconds(pid).unwrap();
        sh.kill().unwrap();
        sh.wait().unwrap();
        assert!(tree > own + 0.05, "tree {tree} own {own}");
        assert!(tree_cpu_seconds(pid).is_none());
    }
}
