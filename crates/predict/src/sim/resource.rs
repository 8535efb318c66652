//! A counted resource with a FIFO of waiters: thread pools, CPU cores, the
//! offload pool, the PostgreSQL connection pool.

use std::collections::VecDeque;

/// What a waiter does once it gets the resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// Start the request's program (it got its request thread).
    Start,
    /// Run a CPU leaf.
    Cpu,
    /// Begin an IO leaf (it got its offload thread).
    Io,
    /// Make the PostgreSQL call (it got a connection); `id` names the wait.
    Pg { id: u64 },
}

/// Someone waiting: request slot, node, and what comes next.
#[derive(Debug, Clone, Copy)]
pub struct Waiter {
    /// Request slot.
    pub slot: u32,
    /// Node of the request's program.
    pub node: u32,
    /// Continuation.
    pub then: Then,
}

/// `cap` units (u32::MAX = unbounded), the busy count, and a FIFO of waiters.
#[derive(Debug)]
pub struct Resource {
    /// Units in all.
    pub cap: u32,
    /// Units in use.
    pub busy: u32,
    /// Most units in use at once.
    pub peak: u32,
    waiters: VecDeque<Waiter>,
}

impl Resource {
    /// A resource of `cap` units.
    pub fn new(cap: u32) -> Self {
        Resource {
            cap: cap.max(1),
            busy: 0,
            peak: 0,
            waiters: VecDeque::new(),
        }
    }

    /// Waiters queued.
    pub fn waiting(&self) -> usize {
        self.waiters.len()
    }

    /// Is a unit free right now?
    pub fn free(&self) -> bool {
        self.busy < self.cap
    }

    /// Take a unit if one is free (true), or queue `w` (false).
    pub fn acquire(&mut self, w: Waiter) -> bool {
        if self.busy < self.cap {
            self.take();
            true
        } else {
            self.waiters.push_back(w);
            false
        }
    }

    fn take(&mut self) {
        self.busy += 1;
        self.peak = self.peak.max(self.busy);
    }

    /// Give a unit back; the next waiter (if any) gets it and is returned.
    pub fn release(&mut self) -> Option<Waiter> {
        self.busy -= 1;
        let w = self.waiters.pop_front()?;
        self.take();
        Some(w)
    }
}
