//! A runtime's target in the foreground (`iolab serve --runtime NAME`): it
//! shares our stdout (first line: its URL) and stderr; SIGINT/SIGTERM sent to
//! us are forwarded as SIGTERM, and SIGKILL follows after a grace period.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{TargetCommand, TargetError};

/// Run `cmd` until it exits; the child dies with us (`PR_SET_PDEATHSIG`).
/// Returns our exit code: 0 after a forwarded signal, else the target's own
/// (2 for its usage errors).
pub fn serve(cmd: &TargetCommand, grace: Duration) -> Result<u8, TargetError> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(TargetError::Signals)?;
    }
    let (program, args) = cmd.argv.split_first().ok_or(TargetError::EmptyCommand)?;
    let mut c = Command::new(program);
    c.args(args).stdin(Stdio::null());
    if let Some(dir) = &cmd.dir {
        c.current_dir(dir);
    }
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls (prctl, getppid, raise) between fork and exec.
    unsafe {
        c.pre_exec(move || {
            super::child::die_with_parent(parent);
            Ok(())
        });
    }
    let mut child = c.spawn().map_err(|why| TargetError::Spawn {
        program: program.clone(),
        why,
    })?;
    let pid = child.id() as libc::pid_t;
    let mut kill_at: Option<Instant> = None;
    loop {
        if let Some(status) = child.try_wait().map_err(TargetError::Wait)? {
            return Ok(match (kill_at, status.code(), status.signal()) {
                (Some(_), _, _) => 0,
                (None, Some(c), _) => u8::try_from(c).unwrap_or(1),
                (None, None, Some(s)) => u8::try_from(128 + s).unwrap_or(1),
                _ => 1,
            });
        }
        match kill_at {
            None if stop.load(Ordering::Relaxed) => {
                // SAFETY: signalling our own child by its pid.
                unsafe { libc::kill(pid, libc::SIGTERM) };
                kill_at = Some(Instant::now() + grace);
            }
            Some(t) if Instant::now() >= t => {
                // SAFETY: as above; it ignored SIGTERM for `grace`.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
