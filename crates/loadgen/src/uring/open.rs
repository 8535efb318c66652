//! Open loop on the ring: sends become due on the thread's share of the
//! schedule and go to the [`Backlog`]; an idle kept-alive connection takes the
//! newest due request, else a new connection is opened while under the cap,
//! else the request waits there until a connection frees up or its deadline
//! passes (`not_sent`) — as [`crate::open_loop`] does on epoll.

use std::io;

use iolab_model::schedule::Schedule;

use super::conns::Conns;
use super::Driver;
use crate::backlog::Backlog;
use crate::run_ctx::RunCtx;

/// The dispatcher of one thread.
pub struct Open {
    schedule: Schedule,
    start_ns: u64,
    /// Next send time (run clock); `None` once the schedule is done or cut.
    next: Option<u64>,
    backlog: Backlog,
    /// Slots holding a kept-alive connection with no request.
    idle: Vec<u32>,
    /// Slots with no connection, for reuse.
    free: Vec<u32>,
    cap: usize,
}

impl Open {
    pub fn new(ctx: &RunCtx, mut schedule: Schedule, cap: usize) -> Self {
        let next = schedule.next().map(|o| ctx.start_ns + o);
        Open {
            schedule,
            start_ns: ctx.start_ns,
            next,
            backlog: Backlog::default(),
            idle: Vec::new(),
            free: Vec::new(),
            cap: cap.max(1),
        }
    }

    /// Send the newest due request on `slot`; false if none is left.
    fn send_on(&mut self, c: &mut Conns, slot: u32) -> io::Result<bool> {
        match self.backlog.take(c.ctx, c.now, &mut c.rec) {
            Some(at) => c.start(slot, at, true).map(|()| true),
            None => Ok(false),
        }
    }

    /// The schedule is cut: what was never due is planned and not sent.
    fn cut(&mut self, c: &mut Conns) {
        Backlog::cut(
            &mut c.rec,
            self.start_ns,
            self.next.take(),
            &mut self.schedule,
        );
    }

    /// A request just became due: an idle connection, else a new one.
    fn dispatch(&mut self, c: &mut Conns) -> io::Result<()> {
        if let Some(slot) = self.idle.pop() {
            if !self.send_on(c, slot)? {
                self.idle.push(slot);
            }
        } else if c.open < self.cap {
            let slot = self.free.pop().unwrap_or_else(|| c.add_slot());
            if !self.send_on(c, slot)? {
                self.free.push(slot);
            }
        }
        Ok(())
    }
}

impl Driver for Open {
    fn tick(&mut self, c: &mut Conns) -> io::Result<Option<u64>> {
        while let Some(at) = self.next {
            if c.ctx.cancelled() || c.now >= c.ctx.hard_end_ns {
                self.cut(c);
                break;
            }
            if at > c.now {
                break;
            }
            c.rec.planned();
            self.backlog.push(at);
            self.next = self.schedule.next().map(|o| self.start_ns + o);
            self.dispatch(c)?;
        }
        Ok(self.next)
    }

    fn ready(&mut self, c: &mut Conns, slot: u32) -> io::Result<()> {
        if self.send_on(c, slot)? {
            return Ok(());
        }
        if c.is_idle(slot) {
            self.idle.push(slot);
        } else {
            self.free.push(slot);
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.next.is_none() && self.backlog.is_empty()
    }

    fn end(&mut self, c: &mut Conns) {
        self.cut(c);
        self.backlog.drain_not_sent(&mut c.rec);
    }
}
