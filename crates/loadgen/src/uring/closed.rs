//! Closed loop on the ring: one slot per client; a client sends its next
//! request as soon as its previous one is recorded, until the thread's share
//! of `--requests` is used up, `--duration` has passed, or the run is
//! cancelled (as [`crate::closed_loop`] does on epoll).
//!
//! A client whose request failed without an answer (refused, reset, out of
//! ports) waits before its next one, with the epoll engine's back-off
//! ([`crate::closed_loop::backoff_ns`]: 1 ms doubling to 100 ms until an
//! answer comes), so a dead target costs the ring no core either.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;

use super::conns::Conns;
use super::Driver;
use crate::closed_loop::backoff_ns;

/// The clients of one thread.
pub struct Closed {
    clients: usize,
    remaining: Option<u64>,
    end_ns: u64,
    started: bool,
    stopped: usize,
    /// Failed requests in a row, per slot.
    failures: Vec<u32>,
    /// Clients backing off: (when they send again, slot), soonest first.
    waiting: BinaryHeap<Reverse<(u64, u32)>>,
}

impl Closed {
    pub fn new(clients: usize, requests: Option<u64>, end_ns: u64) -> Self {
        Closed {
            clients,
            remaining: requests,
            end_ns,
            started: false,
            stopped: 0,
            failures: vec![0; clients],
            waiting: BinaryHeap::new(),
        }
    }

    /// The client on `slot` sends again, or stops for good.
    fn next(&mut self, c: &mut Conns, slot: u32) -> io::Result<()> {
        let now = c.now;
        let over = c.ctx.cancelled() || now >= self.end_ns || self.remaining == Some(0);
        if over {
            self.stopped += 1;
            return Ok(());
        }
        if let Some(n) = &mut self.remaining {
            *n -= 1;
        }
        c.rec.planned();
        c.start(slot, now, false)
    }
}

impl Driver for Closed {
    fn tick(&mut self, c: &mut Conns) -> io::Result<Option<u64>> {
        if !self.started {
            self.started = true;
            for _ in 0..self.clients {
                let slot = c.add_slot();
                self.next(c, slot)?;
            }
        }
        while let Some(&Reverse((at, slot))) = self.waiting.peek() {
            if at > c.now {
                return Ok(Some(at));
            }
            self.waiting.pop();
            self.next(c, slot)?;
        }
        Ok(None)
    }

    fn ready(&mut self, c: &mut Conns, slot: u32) -> io::Result<()> {
        let failures = &mut self.failures[slot as usize];
        if !c.unanswered(slot) {
            *failures = 0;
            return self.next(c, slot);
        }
        *failures = failures.saturating_add(1);
        // Wake in time for the run's end; cancellation is seen then.
        let at = (c.now + backoff_ns(*failures)).min(self.end_ns);
        self.waiting.push(Reverse((at, slot)));
        Ok(())
    }

    fn finished(&self) -> bool {
        self.started && self.stopped == self.clients
    }
}
