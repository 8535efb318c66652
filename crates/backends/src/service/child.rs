//! Service processes tied to iolab's life: their own process group (a
//! terminal's Ctrl-C reaches only iolab, which then stops them in order),
//! `PR_SET_PDEATHSIG = SIGKILL` (they never outlive iolab, even a killed
//! one), and, when iolab runs as root, the service's own user.
//!
//! Privileges are dropped here, before exec, rather than by the service
//! (`memcached -u`, `runuser`): the kernel clears the parent-death signal
//! whenever a process changes its user ids, so it must be set *after* the
//! switch for it to hold.

use std::ffi::CString;
use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

/// A user to run a service as: (uid, gid).
pub type User = (libc::uid_t, libc::gid_t);

/// True when iolab runs as root (services then run as their own user).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The uid and gid of user `name`, if it exists.
pub fn user_ids(name: &str) -> Option<User> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: getpwnam_r writes into `pwd` and `buf`, both ours and sized as
    // passed; `result` points at `pwd` on success.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwnam_r(
            cname.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        );
        (rc == 0 && !result.is_null()).then_some((pwd.pw_uid, pwd.pw_gid))
    }
}

/// Make `cmd` run as `user` (when given), in its own process group, killed
/// when iolab dies. The spawning thread must outlive the child (the death
/// signal fires when the *thread* that forked it exits).
pub fn prepare(cmd: &mut Command, user: Option<User>) {
    cmd.process_group(0);
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls (setgroups, setgid, setuid, prctl,
    // getppid, raise) between fork and exec, on copied plain data.
    unsafe {
        cmd.pre_exec(move || {
            if let Some((uid, gid)) = user {
                if libc::setgroups(1, &gid) != 0 || libc::setgid(gid) != 0 || libc::setuid(uid) != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
            die_with_parent(parent);
            Ok(())
        });
    }
}

/// A running service process; stopped (and its group killed) when dropped.
#[derive(Debug)]
pub struct ServiceChild {
    child: Child,
    /// The signal that asks it to stop at once.
    stop_signal: libc::c_int,
    stopped: bool,
}

impl ServiceChild {
    /// Spawn a prepared command (see [`prepare`]).
    pub fn spawn(cmd: &mut Command, stop_signal: libc::c_int) -> io::Result<ServiceChild> {
        Ok(ServiceChild {
            child: cmd.spawn()?,
            stop_signal,
            stopped: false,
        })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `Some(status)` once the process has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Send the stop signal, wait up to `grace`, then SIGKILL the whole
    /// process group and reap the process.
    pub fn stop(&mut self, grace: Duration) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        let pgid = self.child.id() as libc::pid_t;
        if self.exited().is_none() {
            // SAFETY: kill(2) on the process we started.
            unsafe {
                libc::kill(pgid, self.stop_signal);
            }
            let deadline = Instant::now() + grace;
            while Instant::now() < deadline && self.exited().is_none() {
                thread::sleep(Duration::from_millis(10));
            }
        }
        // SAFETY: a negative pid signals the process group we created.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ServiceChild {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(5));
    }
}

/// In a forked child, before exec: be killed when the parent dies, and die
/// now if it already has (it may have died before `prctl` took effect).
///
/// # Safety
/// Only between fork and exec (in a `pre_exec` closure): it makes only
/// async-signal-safe calls.
pub unsafe fn die_with_parent(parent: libc::pid_t) {
    libc::prctl(
        libc::PR_SET_PDEATHSIG,
        libc::SIGKILL as libc::c_ulong,
        0,
        0,
        0,
    );
    if libc::getppid() != parent {
        libc::raise(libc::SIGKILL);
    }
}

/// How a process ended, in words: `exit status 1`, `killed by signal 9`.
pub fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => status.to_string(),
    }
}

/// A free loopback port (bound, then released: a service may still lose it
/// to a race, which its starter retries).
pub fn free_port() -> io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Why a started child never became ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WaitError {
    /// It exited first.
    #[error("exited at start ({})", describe(*.0))]
    Exited(ExitStatus),
    /// It was still not ready after this long.
    #[error("not ready within {} s", .0.as_secs())]
    Timeout(Duration),
}

/// Wait until `ready` is true, the child exits, or `within` passes.
pub fn wait_ready(
    child: &mut ServiceChild,
    within: Duration,
    mut ready: impl FnMut() -> bool,
) -> Result<(), WaitError> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.exited() {
            return Err(WaitError::Exited(status));
        }
        if ready() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(WaitError::Timeout(within));
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// The first line a program prints for `--version` (or similar), if any.
pub fn version_line(program: &std::path::Path, arg: &str) -> Option<String> {
    let out = Command::new(program).arg(arg).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_are_looked_up_and_unknown_ones_are_none() {
        assert_eq!(user_ids("root"), Some((0, 0)));
        assert_eq!(user_ids("no-such-user-iolab"), None);
    }

    #[test]
    fn a_stopped_child_and_its_group_are_gone() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30 & sleep 30"]);
        prepare(&mut cmd, None);
        let mut c = ServiceChild::spawn(&mut cmd, libc::SIGTERM).unwrap();
        let pgid = c.pid();
        thread::sleep(Duration::from_millis(100));
        assert!(live_members(pgid) >= 2, "sh and its sleeps");
        c.stop(Duration::from_millis(500));
        // Killed members may linger a moment as zombies before they are reaped.
        let until = Instant::now() + Duration::from_secs(5);
        while live_members(pgid) > 0 && Instant::now() < until {
            thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            live_members(pgid),
            0,
            "process group {pgid} still has members"
        );
    }

    /// Processes in group `pgid` that are not zombies.
    fn live_members(pgid: u32) -> usize {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
            .filter(|stat| {
                let f: Vec<&str> = stat
                    .rsplit_once(')')
                    .map_or("", |(_, r)| r)
                    .split_whitespace()
                    .collect();
                f.len() > 2 && f[0] != "Z" && f[2] == pgid.to_string()
            })
            .count()
    }
}
