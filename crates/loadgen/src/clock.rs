//! The run clock (CLOCK_MONOTONIC nanoseconds) and a timerfd-backed sleep.
//!
//! tokio's timer ticks in whole milliseconds, which would add up to 1 ms of
//! schedule lag to every open-loop send; a timerfd registered with the event
//! loop wakes the dispatcher within microseconds of the intended time.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use tokio::io::unix::AsyncFd;

/// Nanoseconds on CLOCK_MONOTONIC (the clock `Instant` uses on Linux).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Maps run-clock nanoseconds onto tokio instants (for request deadlines).
#[derive(Debug, Clone, Copy)]
pub struct ClockBase {
    ns: u64,
    instant: Instant,
}

impl ClockBase {
    /// Capture both clocks at (nearly) the same moment.
    pub fn now() -> Self {
        ClockBase {
            instant: Instant::now(),
            ns: now_ns(),
        }
    }

    /// The tokio instant of a run-clock time.
    pub fn tokio_instant(&self, ns: u64) -> tokio::time::Instant {
        let i = if ns >= self.ns {
            self.instant + Duration::from_nanos(ns - self.ns)
        } else {
            self.instant - Duration::from_nanos(self.ns - ns)
        };
        tokio::time::Instant::from_std(i)
    }
}

/// A one-shot absolute timer on a timerfd, awaited through the event loop.
pub struct PreciseTimer {
    fd: AsyncFd<OwnedFd>,
}

impl PreciseTimer {
    /// Create the timerfd; must be called inside a runtime with IO enabled.
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall; the result is checked before use.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor we own.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: the OwnedFd stays open, and is the same fd, for the AsyncFd's lifetime.
        let fd = unsafe { AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE) }
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(PreciseTimer { fd })
    }

    /// Sleep until the run clock reaches `at_ns`.
    pub async fn sleep_until(&self, at_ns: u64) -> io::Result<()> {
        if now_ns() >= at_ns {
            return Ok(());
        }
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (at_ns % 1_000_000_000) as libc::c_long,
            },
        };
        let raw = self.fd.get_ref().as_raw_fd();
        // SAFETY: valid fd and spec; old value not requested.
        let rc = unsafe {
            libc::timerfd_settime(raw, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut())
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        loop {
            let mut guard = self.fd.readable().await?;
            let mut buf = [0u8; 8];
            // SAFETY: reading 8 bytes into our buffer from our fd.
            let n = unsafe { libc::read(raw, buf.as_mut_ptr().cast(), 8) };
            if n == 8 {
                return Ok(());
            }
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::WouldBlock {
                guard.clear_ready();
                if now_ns() >= at_ns {
                    return Ok(());
                }
                continue;
            }
            return Err(err);
        }
    }
}
