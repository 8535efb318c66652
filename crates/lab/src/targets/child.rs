//! The child process under a target: spawned pinned and tied to our life,
//! its stdout read line by line with a cap (a program that prints no newline
//! cannot grow our memory), its stderr's tail kept for messages, and its
//! process group signalled.
//!
//! Children get `PR_SET_PDEATHSIG = SIGKILL` and their own process group, so
//! they never outlive iolab and a terminal's Ctrl-C reaches only iolab, which
//! then stops them itself. The death signal fires when the *thread* that
//! spawned the child exits: spawn from the thread that also stops it.

use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Mutex};

/// How to start a target.
#[derive(Debug, Clone)]
pub struct TargetCommand {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// The port the target was told to use (`{port}` in a custom command);
    /// `None` = read the URL from its first stdout line.
    pub port: Option<u16>,
    /// CPUs to pin the process (and every thread it starts) to.
    pub cpus: Vec<usize>,
    /// Folder to run it in (a runtime's launcher runs in its folder).
    pub dir: Option<PathBuf>,
}

/// Why a target could not be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StartError(pub String);

/// Bytes of stderr kept for messages.
pub(crate) const STDERR_TAIL: usize = 2_048;
/// Longest stdout line read (a URL line is well under this).
pub(crate) const MAX_LINE: usize = iolab_model::limits::MAX_CHILD_LINE;
/// Stdout lines passed on (the URL, then the metrics URL); the rest is drained.
const LINES_KEPT: usize = 2;

pub(crate) fn signal_group(pgid: libc::pid_t, sig: libc::c_int) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals a process group we created.
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

pub(crate) use iolab_backends::service::child::{describe, die_with_parent};

pub(crate) fn spawn(cmd: &TargetCommand) -> Result<Child, StartError> {
    let (program, args) = cmd
        .argv
        .split_first()
        .ok_or_else(|| StartError("empty target command".into()))?;
    let mut c = Command::new(program);
    c.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(dir) = &cmd.dir {
        c.current_dir(dir);
    }
    let cpus = cmd.cpus.clone();
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls (prctl, getppid, sched_setaffinity,
    // raise) between fork and exec; the CPU set is built from copied data.
    unsafe {
        c.pre_exec(move || {
            die_with_parent(parent);
            if !cpus.is_empty() {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for &cpu in &cpus {
                    libc::CPU_SET(cpu, &mut set);
                }
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            Ok(())
        });
    }
    c.spawn()
        .map_err(|e| StartError(format!("cannot start '{program}': {e}")))
}

pub(crate) fn keep_tail(mut r: impl Read, tail: &Mutex<VecDeque<u8>>) {
    let mut buf = [0u8; 4096];
    while let Ok(n) = r.read(&mut buf) {
        if n == 0 {
            break;
        }
        if let Ok(mut t) = tail.lock() {
            t.extend(&buf[..n]);
            while t.len() > STDERR_TAIL {
                t.pop_front();
            }
        }
    }
}

pub(crate) fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}

/// Read `out` line by line: send the first [`LINES_KEPT`] lines (each cut at
/// [`MAX_LINE`] bytes, a longer one sent as its first bytes), then read and
/// drop the rest so the child never blocks on a full pipe.
pub(crate) fn read_lines(mut out: impl Read, tx: mpsc::Sender<String>) {
    let mut line: Vec<u8> = Vec::new();
    let mut sent = 0;
    let mut overlong = false;
    let mut buf = [0u8; 4096];
    while let Ok(n) = out.read(&mut buf) {
        if n == 0 {
            break;
        }
        for &b in &buf[..n] {
            if sent >= LINES_KEPT {
                break;
            }
            if b == b'\n' {
                if !overlong || !line.is_empty() {
                    let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
                }
                line.clear();
                overlong = false;
                sent += 1;
            } else if line.len() < MAX_LINE {
                line.push(b);
            } else if !overlong {
                // A line past the cap: hand on what we have, drop the rest.
                let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
                line.clear();
                overlong = true;
                sent += 1;
            }
        }
    }
}

/// Wait for `child` to exit; on `cancel`, SIGTERM its group and its
/// descendants that left it (`setsid`), then SIGKILL them after 10 s.
pub(crate) fn wait_or_cancel(
    child: &mut Child,
    cancel: &std::sync::atomic::AtomicBool,
) -> std::io::Result<ExitStatus> {
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};
    let pgid = child.id() as libc::pid_t;
    let mut kill_at: Option<Instant> = None;
    let mut tree = Vec::new();
    loop {
        if let Some(status) = child.try_wait()? {
            // Stopped: nothing it started outlives it.
            super::tree::signal(&tree, libc::SIGKILL);
            return Ok(status);
        }
        match kill_at {
            None if cancel.load(Ordering::Relaxed) => {
                // Collected before the signal, while the chain still leads here.
                tree = super::tree::descendants(pgid);
                signal_group(pgid, libc::SIGTERM);
                super::tree::signal(&tree, libc::SIGTERM);
                kill_at = Some(Instant::now() + Duration::from_secs(10));
            }
            Some(t) if Instant::now() >= t => {
                signal_group(pgid, libc::SIGKILL);
                super::tree::signal(&tree, libc::SIGKILL);
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r16_11_lines_are_capped_and_the_rest_is_drained() {
        let (tx, rx) = mpsc::channel();
        read_lines(
            &b"http://127.0.0.1:1\nmetrics http://127.0.0.1:2\nmore\n"[..],
            tx,
        );
        let got: Vec<String> = rx.try_iter().collect();
        assert_eq!(got, ["http://127.0.0.1:1", "metrics http://127.0.0.1:2"]);

        // A program that never prints a newline: one capped line, bounded memory.
        let (tx, rx) = mpsc::channel();
        read_lines(std::io::repeat(b'x').take(10 * 1024 * 1024), tx);
        let got: Vec<String> = rx.try_iter().collect();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].len(), MAX_LINE);
    }
}
