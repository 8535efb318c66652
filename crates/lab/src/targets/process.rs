//! A running target: started from a [`TargetCommand`], its URL learned
//! from its first stdout line (or the port it was given), `/health` awaited,
//! its death noticed, and stopped (SIGTERM to its group and to descendants
//! that left it, then SIGKILL). The
//! child itself is [`child`](super::child)'s.

use std::collections::VecDeque;
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::child::{
    describe, keep_tail, read_lines, signal_group, spawn, truncate, StartError, TargetCommand,
};
use super::tree;
use crate::http;

/// When a started target counts as up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// The target contract: `GET /health` answers 200.
    Contract,
    /// A foreign target's own path answers 200.
    Path(String),
    /// A foreign target with no health path: its request path answers
    /// anything but a 5xx (it is up, whatever it thinks of a bare GET).
    Answers(String),
}

/// How long a contract target's `/health` may answer 404 before the start
/// gives up (it answers 200 once the target prints its URL).
const CONTRACT_404_GRACE: Duration = Duration::from_secs(1);

impl Health {
    fn path(&self) -> &str {
        match self {
            Health::Contract => "/health",
            Health::Path(p) | Health::Answers(p) => p,
        }
    }

    fn ready(&self, status: u16) -> bool {
        match self {
            Health::Contract | Health::Path(_) => status == 200,
            Health::Answers(_) => status < 500,
        }
    }
}

/// A running target.
#[derive(Debug)]
pub struct Target {
    child: Child,
    /// Base URL, e.g. `http://127.0.0.1:40123`.
    pub url: String,
    /// Its port.
    pub port: u16,
    /// Where it serves `/metrics` apart from its workers (its second stdout
    /// line, `metrics URL`), if it does.
    pub metrics_url: Option<String>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    /// Set when stderr reached its end (the tail is then complete).
    stderr_done: Arc<AtomicBool>,
    stopped: bool,
}

impl Target {
    /// Start the command and wait until `/health` answers 200, the process
    /// exits, `timeout` passes or `cancel` is set.
    pub fn start(
        cmd: &TargetCommand,
        timeout: Duration,
        cancel: &AtomicBool,
    ) -> Result<Target, StartError> {
        Target::start_with_health(cmd, Health::Contract, timeout, cancel)
    }

    /// [`Target::start`] with the readiness check of `health` (a foreign
    /// target's own path).
    pub fn start_with_health(
        cmd: &TargetCommand,
        health: Health,
        timeout: Duration,
        cancel: &AtomicBool,
    ) -> Result<Target, StartError> {
        let mut child = spawn(cmd)?;
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_done = Arc::new(AtomicBool::new(false));
        if let Some(err) = child.stderr.take() {
            let tail = Arc::clone(&stderr);
            let done = Arc::clone(&stderr_done);
            thread::spawn(move || {
                keep_tail(err, &tail);
                done.store(true, Ordering::Release);
            });
        } else {
            stderr_done.store(true, Ordering::Release);
        }
        let (tx, rx) = mpsc::channel();
        if let Some(out) = child.stdout.take() {
            thread::spawn(move || read_lines(out, tx));
        }
        let mut target = Target {
            child,
            url: String::new(),
            port: 0,
            metrics_url: None,
            stderr,
            stderr_done,
            stopped: false,
        };
        let deadline = Instant::now() + timeout;
        match target.await_url(cmd, &rx, deadline, cancel) {
            Ok(()) => {}
            Err(e) => {
                target.stop(Duration::from_millis(200));
                return Err(e);
            }
        }
        if let Err(e) = target.await_health(&health, deadline, cancel) {
            target.stop(Duration::from_millis(200));
            return Err(e);
        }
        target.metrics_url = metrics_line(&rx);
        Ok(target)
    }

    fn await_url(
        &mut self,
        cmd: &TargetCommand,
        rx: &mpsc::Receiver<String>,
        deadline: Instant,
        cancel: &AtomicBool,
    ) -> Result<(), StartError> {
        if let Some(port) = cmd.port {
            self.port = port;
            self.url = format!("http://127.0.0.1:{port}");
            return Ok(());
        }
        loop {
            if let Some(d) = self.exit_detail() {
                return Err(StartError(format!("exited before printing its URL: {d}")));
            }
            if cancel.load(Ordering::Relaxed) {
                return Err(StartError("interrupted while starting".into()));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(StartError(format!(
                    "printed no URL on its first stdout line within the start timeout{}",
                    self.stderr_suffix()
                )));
            }
            match rx.recv_timeout((deadline - now).min(Duration::from_millis(50))) {
                Ok(line) => {
                    let line = line.trim().to_string();
                    let port = http::port_of(&line).ok_or_else(|| {
                        StartError(format!(
                            "first stdout line '{}' is not a URL like http://127.0.0.1:PORT",
                            truncate(&line, 80)
                        ))
                    })?;
                    self.port = port;
                    self.url = line.trim_end_matches('/').to_string();
                    return Ok(());
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    // stdout closed without a line; the exit check above reports it.
                    thread::sleep(Duration::from_millis(20));
                    if self.exit_detail().is_none() && Instant::now() >= deadline {
                        return Err(StartError("closed stdout without printing its URL".into()));
                    }
                }
            }
        }
    }

    fn await_health(
        &mut self,
        check: &Health,
        deadline: Instant,
        cancel: &AtomicBool,
    ) -> Result<(), StartError> {
        let health = format!("{}{}", self.url, check.path());
        let mut last;
        // A contract target serves /health once it prints its URL: a 404
        // that lasts is a service of one's own, not a slow start.
        let mut not_found: Option<Instant> = None;
        loop {
            if let Some(d) = self.exit_detail() {
                return Err(StartError(format!("exited before it was healthy: {d}")));
            }
            if cancel.load(Ordering::Relaxed) {
                return Err(StartError("interrupted while starting".into()));
            }
            match http::get(&health, Duration::from_millis(500)) {
                Ok(r) if check.ready(r.status) => return Ok(()),
                Ok(r) => {
                    last = format!("{} answered {}", check.path(), r.status);
                    if matches!(check, Health::Contract) && r.status == 404 {
                        let since = *not_found.get_or_insert_with(Instant::now);
                        if since.elapsed() >= CONTRACT_404_GRACE {
                            return Err(StartError(format!(
                                "{last}: it does not serve the target contract; for a service of your own add request = {{ path = \"/\" }} to its [[targets]] table (presets/README.md){}",
                                self.stderr_suffix()
                            )));
                        }
                    }
                }
                Err(e) => last = e.to_string(),
            }
            if Instant::now() >= deadline {
                return Err(StartError(format!(
                    "not healthy within the start timeout ({last}){}",
                    self.stderr_suffix()
                )));
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `Some(exit status + stderr tail)` when the process has exited.
    pub fn exit_detail(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => {
                // Let the reader take in what the process wrote last (bounded:
                // a grandchild may hold the pipe open).
                let until = Instant::now() + Duration::from_millis(300);
                while !self.stderr_done.load(Ordering::Acquire) && Instant::now() < until {
                    thread::sleep(Duration::from_millis(5));
                }
                Some(format!("{}{}", describe(status), self.stderr_suffix()))
            }
            _ => None,
        }
    }

    /// The last bytes the target wrote on stderr.
    pub fn stderr_tail(&self) -> String {
        let buf = self
            .stderr
            .lock()
            .map(|b| b.iter().copied().collect::<Vec<u8>>());
        String::from_utf8_lossy(&buf.unwrap_or_default())
            .trim()
            .to_string()
    }

    fn stderr_suffix(&self) -> String {
        let tail = self.stderr_tail();
        if tail.is_empty() {
            String::new()
        } else {
            let last: Vec<&str> = tail.lines().rev().take(3).collect();
            let joined: Vec<&str> = last.into_iter().rev().collect();
            format!("; stderr: {}", truncate(&joined.join(" | "), 300))
        }
    }

    /// SIGTERM the process group and every descendant that left it
    /// (`setsid`), SIGKILL them after `grace`, and reap the target.
    /// Returns the exit status if it had to be collected.
    pub fn stop(&mut self, grace: Duration) -> Option<ExitStatus> {
        if self.stopped {
            return None;
        }
        self.stopped = true;
        let pgid = self.child.id() as libc::pid_t;
        // Collected before any signal: once the target exits, its children
        // are re-parented and no longer lead back to it.
        let tree = tree::descendants(pgid);
        let kill = |tree: &[tree::Proc]| {
            signal_group(pgid, libc::SIGKILL);
            tree::signal(tree, libc::SIGKILL);
        };
        if let Ok(Some(s)) = self.child.try_wait() {
            // The leader is gone; make sure nothing it started lingers.
            kill(&tree);
            return Some(s);
        }
        signal_group(pgid, libc::SIGTERM);
        tree::signal(&tree, libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(s)) = self.child.try_wait() {
                kill(&tree);
                return Some(s);
            }
            thread::sleep(Duration::from_millis(10));
        }
        kill(&tree);
        let _ = self.child.kill();
        self.child.wait().ok()
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        self.stop(Duration::from_millis(500));
    }
}

/// A free loopback port for a custom command's `{port}` (bound then released).
pub fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// The `metrics URL` line a target prints after its URL when it serves
/// `/metrics` on a listener of its own (it has printed it by the time it is
/// healthy; a short wait covers the pipe).
fn metrics_line(rx: &mpsc::Receiver<String>) -> Option<String> {
    let line = rx.recv_timeout(Duration::from_millis(100)).ok()?;
    let url = line
        .trim()
        .strip_prefix("metrics ")?
        .trim()
        .trim_end_matches('/');
    http::port_of(url).map(|_| url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, port: Option<u16>) -> TargetCommand {
        TargetCommand {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            port,
            cpus: vec![],
            dir: None,
        }
    }

    /// Why `script` (run by `sh -c`, announcing `port`) fails to start as
    /// a target within `timeout`.
    fn refused(script: &str, port: Option<u16>, timeout: Duration) -> String {
        let no = AtomicBool::new(false);
        Target::start(&sh(script, port), timeout, &no)
            .unwrap_err()
            .0
    }

    #[test]
    fn a_crashing_target_fails_to_start_with_its_status_and_stderr() {
        let e = refused("echo boom >&2; exit 3", None, Duration::from_secs(5));
        assert!(e.contains("exit status 3"), "{e}");
        assert!(e.contains("boom"), "{e}");
    }

    #[test]
    fn garbage_on_stdout_is_refused() {
        let e = refused("echo hello; sleep 5", None, Duration::from_secs(5));
        assert!(e.contains("is not a URL"), "{e}");
    }

    #[test]
    fn a_silent_target_times_out_and_is_killed() {
        let t0 = Instant::now();
        let e = refused("sleep 30", None, Duration::from_millis(300));
        assert!(e.contains("start timeout"), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn nothing_listening_on_the_given_port_is_not_healthy() {
        let port = free_port().unwrap();
        let e = refused("sleep 30", Some(port), Duration::from_millis(300));
        assert!(e.contains("not healthy"), "{e}");
    }

    #[test]
    fn a_missing_program_is_named() {
        let no = AtomicBool::new(false);
        let cmd = TargetCommand {
            argv: vec!["/nonexistent/iolab-target".into()],
            port: None,
            cpus: vec![],
            dir: None,
        };
        let e = Target::start(&cmd, Duration::from_secs(1), &no).unwrap_err();
        assert!(
            e.0.contains("cannot start '/nonexistent/iolab-target'"),
            "{e}"
        );
    }
}
