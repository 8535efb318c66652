//! Closed loop on the ring: one slot per client; a client sends its next
//! request as soon as its previous one is recorded, until the thread's share
//! of `--requests` is used up, `--duration` has passed, or the run is
//! cancelled (as [`crate::closed_loop`] does on epoll).

use std::io;

use super::conns::Conns;
use super::Driver;

/// The clients of one thread.
pub struct Closed {
    clients: usize,
    remaining: Option<u64>,
    end_ns: u64,
    started: bool,
    stopped: usize,
}

impl Closed {
    pub fn new(clients: usize, requests: Option<u64>, end_ns: u64) -> Self {
        Closed {
            clients,
            remaining: requests,
            end_ns,
            started: false,
            stopped: 0,
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
        Ok(None)
    }

    fn ready(&mut self, c: &mut Conns, slot: u32) -> io::Result<()> {
        self.next(c, slot)
    }

    fn finished(&self) -> bool {
        self.started && self.stopped == self.clients
    }
}
