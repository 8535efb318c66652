//! The open loop's backlog: requests whose send time has come but that have
//! no connection yet, shared by both engines so that they queue, expire and
//! pick alike.
//!
//! A free connection takes the *newest* due request: when every connection
//! is busy, the sends that do go out stay close to their schedule, and the
//! backlog turns into `not_sent` instead of a train of stale sends that could
//! only time out (with oldest-first, each freed connection would always find
//! a request whose deadline had not quite passed, and nothing would ever be
//! counted not_sent).

use std::collections::VecDeque;

use crate::recorder::Recorder;
use crate::run_ctx::RunCtx;

/// Due requests by intended send time (run-clock ns), oldest first.
#[derive(Debug, Default)]
pub struct Backlog {
    queue: VecDeque<u64>,
}

impl Backlog {
    /// A request became due at `at` (already counted as planned).
    pub fn push(&mut self, at: u64) {
        self.queue.push_back(at);
    }

    /// No request is waiting.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Count expired (or, once cancelled, all) queued requests as not_sent,
    /// then take the newest one left.
    pub fn take(&mut self, ctx: &RunCtx, now: u64, rec: &mut Recorder) -> Option<u64> {
        let cancelled = ctx.cancelled();
        let expired = |at: u64| cancelled || now >= (at + ctx.timeout_ns).min(ctx.hard_end_ns);
        while let Some(&at) = self.queue.front() {
            if !expired(at) {
                break;
            }
            self.queue.pop_front();
            rec.not_sent(at);
        }
        self.queue.pop_back()
    }

    /// The run is over: whatever is still queued was never sent.
    pub fn drain_not_sent(&mut self, rec: &mut Recorder) {
        for at in self.queue.drain(..) {
            rec.not_sent(at);
        }
    }
}
