//! The io_uring engine: one ring per generator thread driving every
//! connection of that thread as completions, behind the same schedule
//! ([`crate::thread_share::ThreadShare`]), recorder and accounting as the epoll engine.
//!
//! The loop: time out what is overdue, give free connections their next
//! request (the driver: [`open`] or [`closed`]), then one `io_uring_enter`
//! submits every send and receive queued since the last one and waits for the
//! next completion, the next send time or the soonest deadline, whichever
//! comes first. wrk makes a `write`, a `read` and a share of an `epoll_wait`
//! per request; here a round of completions costs one system call however
//! many requests it carries.

mod closed;
mod conns;
mod deadlines;
mod open;
mod ring;

use std::io;

pub use ring::{probe, Ring, UringError};

use crate::clock::now_ns;
use crate::error::ThreadError;
use crate::recorder::Recorder;
use crate::run_ctx::RunCtx;
use crate::thread_share::ThreadShare;
use conns::Conns;

/// Longest single wait, so that cancellation is noticed.
const MAX_WAIT_NS: u64 = 50_000_000;
/// Past the hard cap by this much, the loop stops whatever is left.
const STOP_SLACK_NS: u64 = 1_000_000_000;
/// A spin round back within this long ran nothing else: that was spinning
/// (a longer one ran another thread, whose time is not ours).
const IDLE_ROUND_NS: u64 = 20_000;

/// What decides which request each free connection sends next.
trait Driver {
    /// Start whatever is due; returns when something next becomes due
    /// (`None`: nothing will, only answers are awaited).
    fn tick(&mut self, c: &mut Conns) -> io::Result<Option<u64>>;
    /// `slot` became free or idle: give it a request or park it.
    fn ready(&mut self, c: &mut Conns, slot: u32) -> io::Result<()>;
    /// Nothing more will be sent.
    fn finished(&self) -> bool;
    /// The loop is over: account for whatever never went out.
    fn end(&mut self, _c: &mut Conns) {}
}

/// Run one generator thread's work on `ring` (made by the caller with
/// [`Ring::new`] for [`ThreadShare::slots`], so that a kernel refusing it can be met
/// with the epoll engine instead), from `ctx.start_ns`.
pub fn run(
    ctx: &RunCtx,
    rec: Recorder,
    work: ThreadShare,
    ring: Ring,
) -> Result<Recorder, ThreadError> {
    // Waits end at the nanosecond asked, not up to 50 us later.
    // SAFETY: prctl on the calling thread with a plain integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    let mut c = Conns::new(ctx, rec, ring);
    // The start waited for in slices, so a cancel (Ctrl-C) during a long
    // `--start-at` lead ends the run now, not at the start (issue 30, finding 4).
    while !ctx.cancelled() && now_ns() < ctx.start_ns {
        sleep_until(ctx.start_ns.min(now_ns() + MAX_WAIT_NS));
    }
    c.now = now_ns();
    let res = match work {
        ThreadShare::Open { schedule, cap } => {
            let mut d = open::Open::new(ctx, schedule, cap);
            let spun = run_loop(&mut c, &mut d, ctx.spin_ns);
            d.end(&mut c);
            spun
        }
        ThreadShare::Closed {
            clients,
            requests,
            end_ns,
        } => {
            let mut d = closed::Closed::new(clients, requests, end_ns);
            run_loop(&mut c, &mut d, 0)
        }
    };
    let spin_ns = res.map_err(ThreadError::Uring)?;
    let mut rec = c.into_recorder();
    rec.spin_ns = spin_ns;
    Ok(rec)
}

/// Sleep until the run clock reaches `at` (absolute, so no drift).
fn sleep_until(at: u64) {
    let ts = libc::timespec {
        tv_sec: (at / 1_000_000_000) as libc::time_t,
        tv_nsec: (at % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: clock_nanosleep reads the timespec we own; EINTR just wakes early.
    while now_ns() < at {
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
    }
}

/// Hand every slot that became free or idle to the driver (a start may
/// fail at once and free its slot again, hence the loop).
fn drain_ready(c: &mut Conns, d: &mut impl Driver) -> io::Result<()> {
    while let Some(slot) = c.ready.pop() {
        d.ready(c, slot)?;
    }
    Ok(())
}

/// The loop; returns the time spent spinning (`spin_ns` > 0: within that
/// long of a send, poll and yield instead of sleeping).
fn run_loop(c: &mut Conns, d: &mut impl Driver, spin_ns: u64) -> io::Result<u64> {
    let mut spun = 0u64;
    loop {
        c.expire();
        drain_ready(c, d)?;
        let wake = d.tick(c)?;
        drain_ready(c, d)?;
        if d.finished() && c.busy == 0 {
            return Ok(spun);
        }
        if c.now >= c.ctx.hard_end_ns.saturating_add(STOP_SLACK_NS) {
            return Ok(spun);
        }
        if let Some(w) = wake.filter(|&w| spin_ns > 0 && w <= c.now + spin_ns) {
            // Close to a send: stay awake, collecting what has completed.
            let before = c.now;
            if c.poll(0)? == 0 && c.now < w {
                std::thread::yield_now();
                let after = now_ns();
                if after - before < IDLE_ROUND_NS {
                    spun += after - before;
                }
                c.now = after;
            }
            continue;
        }
        let mut until = c.now + MAX_WAIT_NS;
        if let Some(w) = wake {
            until = until.min(w.saturating_sub(spin_ns));
        }
        if let Some(dl) = c.next_deadline() {
            until = until.min(dl);
        }
        c.poll(until.saturating_sub(c.now))?;
    }
}
