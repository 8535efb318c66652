//! What a run hands its generator threads and gets back from them: the
//! shared, read-only [`RunCtx`] (where connections open: [`Dial`];
//! rendered requests, clock, deadlines, cancel flag) and each thread's
//! [`ThreadOutput`]. The engines, the loops and the merge read it; it reads
//! only leaves (the dial, the recorder, HTTP/2's request heads), so a
//! protocol module reads the dial, never this.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use iolab_model::attack::Engine;
use iolab_model::protocol::ProtocolKind;

use crate::clock::ClockBase;
use crate::dial::Dial;
use crate::recorder::Recorder;

/// What every generator thread shares, read-only.
pub struct RunCtx {
    /// Where and how connections open.
    pub dial: Dial,
    /// The run's row of the protocol table: which [`crate::protocol`]
    /// worker its loops drive.
    pub kind: ProtocolKind,
    /// The requests, rendered; sent in turn.
    pub requests: Vec<Vec<u8>>,
    /// Index of the next request (only read with more than one).
    pub turn: AtomicUsize,
    pub timeout_ns: u64,
    pub new_connection: bool,
    pub start_ns: u64,
    pub hard_end_ns: u64,
    pub clock: ClockBase,
    pub cancel: Option<Arc<AtomicBool>>,
    /// Open loop: busy-wait this close to a send (0 = always sleep).
    pub spin_ns: u64,
    /// HTTP/2 (`--http2`): the requests as HTTP/2 heads, sent instead of
    /// `requests`, and the streams per connection.
    pub h2: Option<crate::h2::Requests>,
    /// A replayed mix: the endpoint of each of `requests` (empty without one).
    pub endpoint_of: Vec<u32>,
}

impl RunCtx {
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(Relaxed))
    }

    /// The endpoint of request `i` of a replayed mix (`None` without one).
    pub fn endpoint(&self, i: usize) -> Option<usize> {
        self.endpoint_of.get(i).map(|e| *e as usize)
    }

    /// The index of the next request in [`RunCtx::requests`].
    pub fn next_index(&self) -> usize {
        self.next_of(self.requests.len())
    }

    /// The next of `n` in turn, across threads (the counter is only touched
    /// with more than one).
    fn next_of(&self, n: usize) -> usize {
        match n {
            0 | 1 => 0,
            n => self.turn.fetch_add(1, Relaxed) % n,
        }
    }

    /// HTTP/2: the next request's head, in turn as [`Self::next_index`].
    pub fn next_head(&self) -> Option<&crate::h2::head::Head> {
        let heads = &self.h2.as_ref()?.heads;
        heads.get(self.next_of(heads.len()))
    }

    /// Requests one connection carries at once (1 over HTTP/1.1).
    pub fn streams(&self) -> usize {
        self.h2.as_ref().map_or(1, |h| h.streams.max(1) as usize)
    }
}

/// One thread's measurements.
pub struct ThreadOutput {
    pub rec: Recorder,
    /// The engine this thread ran on (`auto` falls back per thread).
    pub engine: Engine,
    pub cpu_s: f64,
    /// Seconds it was ready to run but another process held its CPU.
    pub wait_s: Option<f64>,
    pub end_ns: u64,
}

/// Everything the merge step needs besides the threads' outputs.
pub struct RunOutput {
    pub threads: Vec<ThreadOutput>,
    /// The engine that ran (`epoll`, `io_uring`, or `io_uring+epoll` when
    /// some threads of an `auto` run had their ring refused).
    pub engine: &'static str,
    pub start_ns: u64,
    pub started_unix_ms: u64,
    pub cpus: Vec<usize>,
    pub cancelled: bool,
}

/// A duration in nanoseconds, saturating (a week is 6e14 ns: far from it).
pub fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// `share` of `total` for thread `i` of `n` (as even as possible).
pub fn share(total: u64, i: usize, n: usize) -> u64 {
    total / n as u64 + u64::from((i as u64) < total % n as u64)
}
