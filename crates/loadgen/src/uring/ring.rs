//! One io_uring per generator thread, set up for a single thread that both
//! submits and reaps, and the tags ([`token`]) that tell a completion which
//! connection slot and which operation it belongs to.
//!
//! `io-uring` (tokio-rs) is the crate: the lowest of the four maintained
//! ones, so the loop owns its batching (every send and receive made ready by
//! one round of completions goes to the kernel in the next `io_uring_enter`,
//! together with the wait for the round after). tokio-uring and monoio would
//! put a runtime and a task per connection back between the ring and the
//! loop, glommio wants pinned memory and its own executor.

use std::io;

use io_uring::{opcode, squeue, types, IoUring, Probe};

/// Operation kinds carried in a completion's tag.
pub const CONNECT: u8 = 1;
/// A send (its completion is skipped on success where the kernel can).
pub const SEND: u8 = 2;
/// A receive.
pub const RECV: u8 = 3;
/// A cancellation of a pending connect (its completion is ignored).
pub const CANCEL: u8 = 4;

/// `IORING_ENTER_GETEVENTS` (the io-uring crate keeps its flag type private):
/// run deferred completion work in this `io_uring_enter`.
const ENTER_GETEVENTS: u32 = 1;

/// The tag of an operation: slot, the slot's connection generation (so a
/// late completion of a closed connection is recognised) and the kind.
pub fn token(slot: u32, gen: u32, kind: u8) -> u64 {
    (u64::from(slot) << 32) | (u64::from(gen & 0x00FF_FFFF) << 8) | u64::from(kind)
}

/// `(slot, generation, kind)` of a tag.
pub fn untoken(t: u64) -> (u32, u32, u8) {
    ((t >> 32) as u32, ((t >> 8) & 0x00FF_FFFF) as u32, t as u8)
}

/// The ring and what the kernel offers on it.
pub struct Ring {
    ring: IoUring,
    /// `IOSQE_CQE_SKIP_SUCCESS` works (5.17+): a send completes silently.
    pub skip_success: bool,
}

/// Why io_uring cannot be used on this kernel.
#[derive(Debug, thiserror::Error)]
pub enum UringError {
    /// No ring at all (no io_uring, or `kernel.io_uring_disabled`).
    #[error("io_uring_setup failed: {0}")]
    Setup(io::Error),
    /// A ring without timed waits.
    #[error("the kernel's io_uring has no timed waits (IORING_FEAT_EXT_ARG, Linux 5.11+)")]
    NoTimedWaits,
    /// The operations cannot be listed.
    #[error("io_uring probe failed: {0}")]
    Probe(io::Error),
    /// An operation the engine needs is missing.
    #[error("the kernel's io_uring has no {0} operation")]
    Missing(&'static str),
}

/// Why io_uring cannot be used here, or `Ok` when the engine can run.
pub fn probe() -> Result<(), UringError> {
    let ring = IoUring::new(8).map_err(UringError::Setup)?;
    if !ring.params().is_feature_ext_arg() {
        return Err(UringError::NoTimedWaits);
    }
    let mut p = Probe::new();
    ring.submitter()
        .register_probe(&mut p)
        .map_err(UringError::Probe)?;
    for (code, name) in [
        (opcode::Connect::CODE, "connect"),
        (opcode::Send::CODE, "send"),
        (opcode::Recv::CODE, "recv"),
        (opcode::AsyncCancel::CODE, "async cancel"),
    ] {
        if !p.is_supported(code) {
            return Err(UringError::Missing(name));
        }
    }
    Ok(())
}

impl Ring {
    /// A ring for up to `slots` connections. Tries the cheapest set-up first
    /// (one issuer, task work deferred to our own waits: 6.1+), then
    /// cooperative task work (5.19+), then plain.
    pub fn new(slots: usize) -> io::Result<Ring> {
        let sq = (slots.saturating_mul(2))
            .clamp(64, 4096)
            .next_power_of_two() as u32;
        let cq = (slots.saturating_mul(4))
            .clamp(256, 65536)
            .next_power_of_two() as u32;
        let attempts: [fn(&mut io_uring::Builder); 3] = [
            |b| {
                b.setup_single_issuer().setup_defer_taskrun();
            },
            |b| {
                b.setup_coop_taskrun();
            },
            |_| {},
        ];
        let mut last = None;
        for set in attempts {
            let mut b = IoUring::builder();
            b.setup_cqsize(cq).setup_clamp();
            set(&mut b);
            match b.build(sq) {
                Ok(ring) => {
                    let skip_success = ring.params().is_feature_skip_cqe_on_success();
                    return Ok(Ring { ring, skip_success });
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("io_uring_setup failed")))
    }

    /// Queue one operation, handing the queue to the kernel first if full.
    pub fn push(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: every buffer and address an entry points to lives in the
            // engine's slots or run context until its completion is reaped
            // (a slot is never reused or dropped with an operation pending).
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                return Ok(());
            }
            self.ring.submit()?;
        }
    }

    /// Submit what is queued and wait for at least one completion, at most
    /// `timeout_ns` (0: only collect what is already there).
    pub fn wait(&mut self, timeout_ns: u64) -> io::Result<()> {
        if timeout_ns == 0 {
            return self.collect();
        }
        let ts = types::Timespec::new()
            .sec(timeout_ns / 1_000_000_000)
            .nsec((timeout_ns % 1_000_000_000) as u32);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Submit what is queued and run the completions' deferred work, asking
    /// for none: no wait at all. A timed wait of 0 ns would still set up a
    /// timer and usually cost a spinning loop's round more than 20 us, which
    /// is also why such rounds were not counted as spinning (`spin_s`).
    fn collect(&mut self) -> io::Result<()> {
        let queued = self.ring.submission().len() as u32;
        // SAFETY: no argument is passed, and every queued entry's buffers
        // live until its completion is reaped (see `push`).
        let entered = unsafe {
            self.ring
                .submitter()
                .enter::<libc::sigset_t>(queued, 0, ENTER_GETEVENTS, None)
        };
        match entered {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EBUSY)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Move every completion out of the ring into `into`: `(tag, result)`.
    pub fn reap(&mut self, into: &mut Vec<(u64, i32)>) {
        into.extend(self.ring.completion().map(|c| (c.user_data(), c.result())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip() {
        for (slot, gen, kind) in [(0, 0, CONNECT), (19_999, 0x00FF_FFFF, RECV), (7, 3, CANCEL)] {
            assert_eq!(untoken(token(slot, gen, kind)), (slot, gen, kind));
        }
        // The generation wraps inside its 24 bits.
        assert_eq!(untoken(token(1, 0x0100_0002, SEND)), (1, 2, SEND));
    }
}
