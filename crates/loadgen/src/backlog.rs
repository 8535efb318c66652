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

use iolab_model::schedule::Schedule;

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

    /// The schedule was cut (Ctrl-C, or the hard end passed) with `next`
    /// (run clock) and the rest of `schedule` (offsets from `start_ns`)
    /// never due: they were planned all the same and are `not_sent`, so an
    /// interrupted run plans its whole schedule (issue 30, finding 17). Only
    /// `--csv` needs their times; counting alone does not compute them.
    pub fn cut(rec: &mut Recorder, start_ns: u64, next: Option<u64>, schedule: &mut Schedule) {
        let Some(first) = next else { return };
        if rec.rows.is_some() {
            for at in std::iter::once(first).chain(schedule.map(|o| start_ns + o)) {
                rec.planned();
                rec.not_sent(at);
            }
        } else {
            rec.planned_not_sent(1 + schedule.count_rest());
        }
    }
}
